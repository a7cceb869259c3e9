/**
 * The hot path's one fixture, shared by bench/hot-path.ts, socket-ab.ts,
 * inject-ab.ts and profile-hot-path.ts so they measure the same thing: a
 * 150-resource static catalog (about 18.6 KB for the first page of 100), a
 * tenant that requires `mcp:read` from a local ES256 issuer, and the
 * `resources/list` request of the 2026-07-28 wire.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Descriptor } from './hot-path-server.js';

export const BENCH_AUDIENCE = 'https://bench.example/mcp';

export const catalogDescriptors: Descriptor[] = Array.from({ length: 150 }, (_, i) => ({
  uri: `test://docs/reports/${String(i).padStart(3, '0')}.md`,
  name: `report-${i}`,
  title: `Quarterly report ${i}`,
  description: 'A static fixture resource of the benchmark',
  mimeType: 'text/markdown',
}));

/** A tenant serving the catalog to `mcp:read` callers; `listTtlMs` 0 makes its listings uncached. */
export function benchTenant(issuer: { issuer: string; jwksUri: string }, id: string, listTtlMs?: number) {
  return {
    id,
    auth: {
      issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri, audiences: [BENCH_AUDIENCE] }],
      requiredScopes: ['mcp:read'],
    },
    grants: [{ name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] }],
    sources: [
      {
        id: 'docs',
        type: 'static',
        ...(listTtlMs === undefined ? {} : { ttlMs: { list: listTtlMs } }),
        resources: catalogDescriptors.map((d, i) => ({ ...d, text: `# Report ${i}` })),
      },
    ],
  };
}

/** A `resources/list` request body without a cursor. */
export const listBody = (id: number): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'resources/list',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });

/** The request headers of a 2026-07-28 `resources/list`, with a bearer token when given. */
export const listHeaders = (bearer?: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'resources/list',
  ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
});

/**
 * Writes a configuration of benchmark tenants (`[id, listTtlMs?]`) to a new
 * directory and returns the gateway's environment for it: a fixed public
 * URL (tokens name the bench audience), a fresh SECRETS_KEY, and an access
 * line per request at `info`, as in production.
 */
export async function benchGatewayEnv(
  issuer: { issuer: string; jwksUri: string },
  tenants: ReadonlyArray<readonly [id: string, listTtlMs?: number]>,
): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-hot-path-'));
  const document = { tenants: tenants.map(([id, listTtlMs]) => benchTenant(issuer, id, listTtlMs)) };
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(document));
  return {
    GATEWAY_CONFIG: join(dir, 'gateway.json'),
    DATA_DIR: dir,
    PUBLIC_URL: 'http://127.0.0.1',
    SECRETS_KEY: randomBytes(24).toString('base64url'),
    LOG_LEVEL: 'info',
  };
}
