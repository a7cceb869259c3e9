import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { openListen } from '@mcpgw/test-helpers/sse-listen';
import { validateStreamMessage } from '@mcpgw/test-helpers/wire-schema';
import { within } from '@mcpgw/test-helpers/within';
import { MAIN, runBuilt } from './gateway-process.js';

// The built gateway, as `npm start` runs it: SIGTERM sends every open
// subscriptions/listen stream its completion (MCP 2026-07-28,
// basic/patterns/subscriptions, "Graceful Closure") before the process exits,
// and the process does not wait on the streams to exit.

describe('SIGTERM with listen streams open', () => {
  it('completes every stream, then exits 0 promptly', async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-listen-term-'));
    const file = join(dataDir, 'gateway.json');
    await writeFile(
      file,
      JSON.stringify({
        tenants: [
          {
            id: 'notes',
            anonymous: true,
            sources: [{ id: 'inline', type: 'static', resources: [{ uri: 'note://a', name: 'a', text: 'A' }] }],
          },
        ],
      }),
    );
    try {
      const gateway = runBuilt(MAIN, [], { env: { PORT: String(port), DATA_DIR: dataDir, GATEWAY_CONFIG: file } });
      await gateway.waitForOutput('gateway listening');
      const endpoint = `http://127.0.0.1:${port}/t/notes/mcp`;
      const streams = await Promise.all(
        [1, 2, 3].map((id) =>
          openListen(endpoint, { resourcesListChanged: true, resourceSubscriptions: ['note://a'] }, { id }),
        ),
      );
      for (const stream of streams)
        expect((await stream.next()).method).toBe('notifications/subscriptions/acknowledged');
      gateway.child.kill('SIGTERM');
      for (const [index, stream] of streams.entries()) {
        const completion = await stream.next(10_000);
        expect(completion).toMatchObject({ id: index + 1, result: { resultType: 'complete' } });
        expect(validateStreamMessage(completion)).toEqual([]);
        await stream.ended;
      }
      // Inside a pod's 30 s grace period (counted from here, after the streams ended: a bound on
      // the wait, not a speed claim): no stream holds the shutdown up.
      const { child } = gateway;
      await within(25_000, () => child.exitCode !== null || child.signalCode !== null, 'the exit after SIGTERM');
      expect(await gateway.exited).toMatchObject({ code: 0, signal: null });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
