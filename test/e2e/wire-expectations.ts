/**
 * Assertions shared by the end-to-end tests: every recorded response valid
 * against the revision's schema, and the wire-level error of one read.
 */
import { expect } from 'vitest';
import { type RecordedExchange, type RecordingFetch, wireProblems } from '@mcpgw/test-helpers/recording-fetch';
import type { WireRevision } from '@mcpgw/test-helpers/wire-schema';

/**
 * Fails listing every exchange whose response breaks `revision`'s schema (or
 * the 202 rule for notifications). Also fails when nothing was recorded: a
 * test whose answers came from the client's cache has checked no wire at all.
 */
export function expectWireValid(recorder: RecordingFetch, revision: WireRevision): void {
  expect(
    recorder.exchanges.length,
    'no HTTP exchange was recorded: was the answer served from a cache?',
  ).toBeGreaterThan(0);
  const problems = wireProblems(recorder.exchanges, revision);
  expect(problems, `responses that break the ${revision} schema:\n${problems.join('\n')}`).toEqual([]);
}

/** The JSON-RPC error the gateway sent for the last `resources/read` of `uri`. */
export function wireErrorOfRead(
  recorder: RecordingFetch,
  uri: string,
): { status: number; error: { code: number; message: string; data?: unknown } } {
  const exchange = [...recorder.exchanges].reverse().find((e) => isReadOf(e, uri));
  if (exchange === undefined) throw new Error(`no resources/read of ${uri} was sent`);
  const body = JSON.parse(exchange.responseText) as { error?: { code: number; message: string; data?: unknown } };
  if (body.error === undefined) throw new Error(`resources/read of ${uri} did not fail: ${exchange.responseText}`);
  return { status: exchange.status, error: body.error };
}

function isReadOf(exchange: RecordedExchange, uri: string): boolean {
  const body = exchange.requestBody as { method?: unknown; params?: { uri?: unknown } } | undefined;
  return body?.method === 'resources/read' && body.params?.uri === uri;
}
