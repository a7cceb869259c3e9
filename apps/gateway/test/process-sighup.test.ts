import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { NO_SHEDDING_ENV } from '@mcpgw/test-helpers/gateway';
import { MAIN, runBuilt } from './gateway-process.js';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import { within } from '@mcpgw/test-helpers/within';

// The built gateway, as `npm start` runs it: SIGHUP re-reads the bootstrap
// file and applies what changed; a broken file changes nothing.

function bootstrap(resources: string[]): string {
  return JSON.stringify({
    tenants: [
      {
        id: 'notes',
        anonymous: true,
        sources: [
          {
            id: 'inline',
            type: 'static',
            resources: resources.map((name) => ({ uri: `note://${name}`, name, text: `the ${name} note` })),
          },
        ],
      },
    ],
  });
}

async function listedNames(port: number): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:${port}/t/notes/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'resources/list',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: MODERN_META } }),
  });
  const body = (await response.json()) as { result: { resources: { name: string }[] } };
  return body.result.resources.map((resource) => resource.name);
}

describe('SIGHUP', () => {
  it('re-applies the bootstrap file, refuses a broken one without changing anything, and SIGTERM still stops cleanly', async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-sighup-'));
    const file = join(dataDir, 'gateway.json');
    await writeFile(file, bootstrap(['alpha']));
    try {
      const gateway = runBuilt(MAIN, [], {
        env: { PORT: String(port), DATA_DIR: dataDir, GATEWAY_CONFIG: file, ...NO_SHEDDING_ENV },
        killAfterMs: 90_000,
      });
      await gateway.waitForOutput('gateway listening');
      expect(await listedNames(port)).toEqual(['alpha']);

      await writeFile(file, bootstrap(['alpha', 'beta']));
      gateway.child.kill('SIGHUP');
      await gateway.waitForOutput('bootstrap file reloaded');
      await within(10_000, async () => expect(await listedNames(port)).toContain('beta'), 'beta listed');

      await writeFile(file, '{ "tenants": [ { "id": "Not A Slug" } ] }');
      gateway.child.kill('SIGHUP');
      await gateway.waitForOutput('reload refused');
      const refusal = gateway
        .stdout()
        .split('\n')
        .find((text) => text.includes('reload refused'));
      expect(JSON.parse(refusal ?? '{}')).toMatchObject({ level: 50 });
      expect(await listedNames(port)).toEqual(['alpha', 'beta']);

      gateway.child.kill('SIGTERM');
      const exit = await gateway.exited;
      expect(exit).toMatchObject({ code: 0, signal: null });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
