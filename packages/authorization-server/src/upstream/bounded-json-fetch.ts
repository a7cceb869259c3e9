import { findEgressRefusal } from '@mcpgw/core';
import { UpstreamSignInError } from './upstream-sign-in-error.js';

/** Every request to the upstream gives up after this long, so a slow provider cannot hold a sign-in page. */
export const UPSTREAM_TIMEOUT_MS = 5_000;

export interface BoundedJsonFetchOptions {
  readonly fetch: typeof fetch;
  /** Bytes of body read at most; a larger answer is refused, not truncated. */
  readonly maxBytes: number;
  /** What is fetched, for messages: `discovery document`, `token endpoint`, … */
  readonly what: string;
}

/** A JSON answer: its status and parsed body (`undefined` when the body is not JSON). */
export interface JsonAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Calls an upstream endpoint with a time limit and a size cap, so a slow or
 * hostile provider can neither hold a request nor exhaust memory. Redirects
 * are refused: the configured or discovered URL is the one trusted. A
 * network failure, a timeout or an egress refusal is `upstream_unreachable`
 * (the refusal's message, which names the setting an operator would change,
 * goes to `detail`).
 */
export async function fetchBoundedJson(
  url: string,
  init: RequestInit,
  options: BoundedJsonFetchOptions,
): Promise<JsonAnswer> {
  const timeout = AbortSignal.timeout(UPSTREAM_TIMEOUT_MS);
  const unreachable = (why: string, cause: unknown) =>
    new UpstreamSignInError(
      'upstream_unreachable',
      'The identity provider could not be reached. Try again later.',
      `${options.what} ${url}: ${why}`,
      { cause },
    );
  let response: Response;
  try {
    response = await options.fetch(url, {
      ...init,
      signal: timeout,
      redirect: 'error',
      headers: { accept: 'application/json', ...init.headers },
    });
  } catch (cause) {
    const refused = findEgressRefusal(cause);
    throw unreachable(timeout.aborted ? 'timed out' : (refused?.message ?? 'request failed'), cause);
  }
  let text: string;
  try {
    text = await readBounded(response, options.maxBytes);
  } catch (cause) {
    if (cause instanceof UpstreamSignInError) throw cause;
    throw unreachable(timeout.aborted ? 'timed out reading the response' : 'response failed', cause);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body };
}

async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const tooLarge = () =>
    new UpstreamSignInError(
      'upstream_misconfigured',
      'The identity provider answered with more data than a sign-in needs.',
      `response larger than ${maxBytes} bytes`,
    );
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The body as a JSON object, or undefined. */
export function jsonObject(body: unknown): Record<string, unknown> | undefined {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : undefined;
}
