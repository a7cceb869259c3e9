/**
 * The gateway the end-to-end tests talk to: test/fixtures/e2e/gateway.config.json
 * (tenant `e2e`: a static `fixtures` source and a `docs` files source), with a
 * generated `bulk` static source of 250 resources placed first so that
 * `resources/list` spans three pages of 100, written into a temporary folder
 * next to the corpus the `docs` source publishes. The corpus holds binary
 * bytes, a non-ASCII name and a symlink that leaves the folder.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { createRecordingFetch, type RecordingFetch } from '@mcpgw/test-helpers/recording-fetch';
import type { WireRevision } from '@mcpgw/test-helpers/wire-schema';

export const TENANT = 'e2e';
export const BULK_COUNT = 250;
export const PAGE_SIZE = 100;

/** Every byte value once, so any re-encoding (UTF-8, latin1, base64 slips) changes the bytes. */
export const BINARY_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
export const UNICODE_NAME = 'résumé ☕ 北京.txt';
export const UNICODE_TEXT = 'Grüße aus 北京 — ☕\n';
export const SECRET_TEXT = 'TOP SECRET: outside the published folder\n';
export const README_TEXT = '# Read me\n\nThe e2e corpus.\n';

/** The URI of the n-th generated bulk resource. */
export function bulkUri(index: number): string {
  return `test://bulk/item-${String(index).padStart(3, '0')}`;
}

/** The URI of a `docs` entry (`file:///docs/{path}`, each segment percent-encoded). */
export function docsUri(...segments: string[]): string {
  return `file:///docs/${segments.map(encodeURIComponent).join('/')}`;
}

/**
 * The whole listing in the order a user should see it: sources in config
 * order; bulk and fixtures in declaration order; docs as a depth-first walk,
 * each folder before its contents, names by UTF-16 code units, the root first;
 * `escape.txt` (a symlink out of the folder) not at all.
 */
export function expectedListing(): string[] {
  return [
    ...Array.from({ length: BULK_COUNT }, (_, i) => bulkUri(i)),
    'test://static-text',
    'test://static-binary',
    'file:///docs/',
    'file:///docs/data/',
    docsUri('data', 'bytes.bin'),
    docsUri('readme.md'),
    docsUri(UNICODE_NAME),
  ];
}

export interface E2eGateway {
  gateway: StartedGateway;
  /** The temporary folder holding the bootstrap file and corpus: no response may reveal it. */
  dir: string;
  /** The tenant's MCP endpoint. */
  url: URL;
  close(): Promise<void>;
}

/** Writes the corpus and bootstrap file into a temporary folder and starts the gateway on it. */
export async function startE2eGateway(): Promise<E2eGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgw-e2e-'));
  try {
    const docs = join(dir, 'docs');
    await mkdir(join(docs, 'data'), { recursive: true });
    await mkdir(join(dir, 'outside'));
    await writeFile(join(docs, 'readme.md'), README_TEXT);
    await writeFile(join(docs, 'data', 'bytes.bin'), BINARY_BYTES);
    await writeFile(join(docs, UNICODE_NAME), UNICODE_TEXT);
    await writeFile(join(dir, 'outside', 'secret.txt'), SECRET_TEXT);
    await symlink(join('..', 'outside', 'secret.txt'), join(docs, 'escape.txt'));

    const fixture = JSON.parse(
      await readFile(new URL('../fixtures/e2e/gateway.config.json', import.meta.url), 'utf8'),
    ) as { tenants: { sources: unknown[] }[] };
    const tenant = fixture.tenants[0];
    if (tenant === undefined) throw new Error('test/fixtures/e2e/gateway.config.json declares no tenant');
    tenant.sources.unshift({
      id: 'bulk',
      type: 'static',
      resources: Array.from({ length: BULK_COUNT }, (_, i) => ({
        uri: bulkUri(i),
        name: `item-${i}`,
        mimeType: 'text/plain',
        text: `Bulk item ${i}`,
      })),
    });
    const configPath = join(dir, 'gateway.config.json');
    await writeFile(configPath, JSON.stringify(fixture, null, 2));

    const gateway = await startGateway({ configPath });
    return {
      gateway,
      dir,
      url: new URL(`/t/${TENANT}/mcp`, gateway.baseUrl),
      close: async () => {
        await gateway.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The two ways the official client talks to the gateway. */
export type Era = 'modern' | 'legacy';

/** The revision whose schema judges each era's responses (the newest legacy one for `initialize`). */
export const REVISION_OF: Record<Era, WireRevision> = { modern: '2026-07-28', legacy: '2025-11-25' };

export interface ConnectedClient {
  client: Client;
  recorder: RecordingFetch;
  close(): Promise<void>;
}

/**
 * Connects the official client: pinned to 2026-07-28 (a `server/discover`
 * probe, then per-request `_meta`) or the default legacy `initialize`
 * handshake. Every HTTP exchange goes through a recording fetch.
 */
export async function connectClient(url: URL, era: Era): Promise<ConnectedClient> {
  const recorder = createRecordingFetch();
  const transport = new StreamableHTTPClientTransport(url, { fetch: recorder.fetch });
  const client = new Client(
    { name: 'mcpgw-e2e', version: '1.0.0' },
    { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } },
  );
  await client.connect(transport);
  // The legacy handshake ends with a background GET (the client asks for a server stream once
  // `notifications/initialized` is accepted); it belongs to the handshake. The modern era has none.
  if (era === 'legacy') await recorder.exchange((exchange) => exchange.method === 'GET');
  return { client, recorder, close: () => client.close() };
}
