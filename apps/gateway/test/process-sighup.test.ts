import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../test/helpers/gateway.js';
import { MAIN, runBuilt } from './gateway-process.js';

// The built gateway, as `npm start` runs it: SIGHUP (a closed terminal, or an
// operator expecting a reload) must not end it silently.

describe('SIGHUP', () => {
  it('is logged and ignored: the gateway keeps serving, and SIGTERM still stops it cleanly', async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-sighup-'));
    try {
      const gateway = runBuilt(MAIN, [], { env: { PORT: String(port), DATA_DIR: dataDir } });
      await gateway.waitForOutput('gateway listening');

      gateway.child.kill('SIGHUP');
      await gateway.waitForOutput('SIGHUP ignored');
      const line = gateway
        .stdout()
        .split('\n')
        .find((text) => text.includes('SIGHUP ignored'));
      expect(JSON.parse(line ?? '{}')).toMatchObject({ level: 40, signal: 'SIGHUP' });
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

      gateway.child.kill('SIGTERM');
      const exit = await gateway.exited;
      expect(exit).toMatchObject({ code: 0, signal: null });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});
