/**
 * What bench/s3-read.ts and bench/s3-read-ab.ts set up alike for the gateway
 * they read S3 through: the machine's first non-loopback address (a client of
 * a deployment does not come from loopback), a free port on it, and the
 * bootstrap file of one tenant whose callers bring an ES256 token for
 * `audience` and may read everything of one S3 source, uncached.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';

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
