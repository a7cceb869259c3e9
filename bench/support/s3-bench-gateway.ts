/**
 * What bench/s3-read.ts and bench/s3-read-ab.ts set up alike for the gateway
 * they read S3 through: the machine's first non-loopback address (a client of
 * a deployment does not come from loopback), a free port on it, and the
 * bootstrap file of one tenant whose callers bring an ES256 token for
 * `audience` and may read everything of one S3 source, uncached; and the
 * `resources/read` they send through it.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

/** The machine's first non-loopback IPv4 address, else loopback. */
export function benchHost(): string {
  return (
    Object.values(networkInterfaces())
      .flat()
      .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal)?.address ??
    '127.0.0.1'
  );
}

/** A port free on `host` just now (PUBLIC_URL must name the port: the gateway refuses a Host that does not). */
export function freePortOn(host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface S3BenchTenant {
  issuer: { issuer: string; jwksUri: string };
  audience: string;
  s3: { endpoint: string; credentials: { accessKeyId: string; secretAccessKey: string } };
  bucket: string;
  prefix: string;
}

/** A new directory holding `gateway.json`: tenant `bench` with source `bench` over the bucket's prefix. */
export async function writeS3BenchConfig(tenant: S3BenchTenant): Promise<string> {
  const configDir = await mkdtemp(join(tmpdir(), 'bench-s3-'));
  await writeFile(
    join(configDir, 'gateway.json'),
    JSON.stringify({
      tenants: [
        {
          id: 'bench',
          auth: {
            issuers: [{ issuer: tenant.issuer.issuer, jwksUri: tenant.issuer.jwksUri, audiences: [tenant.audience] }],
            requiredScopes: ['mcp:read'],
          },
          grants: [{ name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'bench' }] }],
          sources: [
            {
              id: 'bench',
              type: 's3',
              endpoint: tenant.s3.endpoint,
              forcePathStyle: true,
              credentials: tenant.s3.credentials,
              bucket: tenant.bucket,
              prefix: tenant.prefix,
              maxObjectBytes: 2 * 1024 * 1024,
              // Measure the serving path, not the result cache: every read goes to S3.
              ttlMs: { read: 0 },
            },
          ],
        },
      ],
    }),
  );
  return configDir;
}

/** The body of a 2026-07-28 `resources/read` of `uri`. */
export const readBody = (uri: string): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri, _meta: MODERN_META } });

/** Its headers: the bearer token, and the Mcp-Method and Mcp-Name a 2026-07-28 request carries. */
export const readHeaders = (token: string, uri: string): Record<string, string> => ({
  'content-type': 'application/json',
  authorization: `Bearer ${token}`,
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'resources/read',
  'mcp-name': uri,
});

/** The decoded blob of a `resources/read` answer, as a client gets it: JSON.parse of the text, then base64. */
export function blobBytes(body: unknown, key: string, status: number): number {
  const blob = (body as { result?: { contents: Array<{ blob?: string }> } }).result?.contents[0]?.blob;
  if (blob === undefined) throw new Error(`no blob for ${key}: HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`);
  return Buffer.from(blob, 'base64').byteLength;
}
