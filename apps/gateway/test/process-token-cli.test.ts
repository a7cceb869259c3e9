import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { NO_SHEDDING_ENV } from '@mcpgw/test-helpers/gateway';
import { MAIN, TOKEN_CLI, runBuilt } from './gateway-process.js';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

// `npm run token` in a second shell that lacks the first shell's PORT and
// GATEWAY_CONFIG: the token is for the gateway that is running, not for the
// one this shell's environment would start.

const BOOTSTRAP = {
  tenants: [
    {
      id: 'acme',
      name: 'Acme',
      auth: { issuers: [{ development: true }], requiredScopes: ['mcp:read'] },
      grants: [{ name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'notes' }] }],
      sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://one', name: 'one', text: 'hello' }] }],
    },
  ],
};

let dir: string;
let dataDir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-token-cli-'));
  dataDir = join(dir, 'data');
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(BOOTSTRAP));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function listWith(port: number, token: string) {
  return fetch(`http://127.0.0.1:${port}/t/acme/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'resources/list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/list',
      params: {
        _meta: MODERN_META,
      },
    }),
  });
}

describe('npm run token', () => {
  it('mints for the running gateway, whatever PORT and GATEWAY_CONFIG its own shell has', async () => {
    const port = await freePort();
    const gateway = runBuilt(MAIN, [], {
      cwd: dir,
      env: { PORT: String(port), GATEWAY_CONFIG: 'gateway.json', DATA_DIR: dataDir, ...NO_SHEDDING_ENV },
    });
    try {
      await gateway.waitForOutput('gateway listening');
      // Only DATA_DIR in common (the signing keys live there).
      const cli = await runBuilt(TOKEN_CLI, ['--tenant', 'acme'], { cwd: dir, env: { DATA_DIR: dataDir } }).exited;
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stderr).toContain(
        `minting for the gateway running as pid ${gateway.child.pid} at http://127.0.0.1:${port}`,
      );
      const token = cli.stdout.trim();
      const response = await listWith(port, token);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { result: { resources: unknown[] } }).result.resources).toHaveLength(1);
    } finally {
      gateway.child.kill('SIGTERM');
      expect((await gateway.exited).code).toBe(0);
    }
    // The gateway took its record with it.
    expect(await readdir(join(dataDir, 'running'))).toEqual([]);
  }, 120_000);

  it('with no gateway running, says which configuration it used and what a gateway needs to match', async () => {
    const cli = await runBuilt(TOKEN_CLI, ['--tenant', 'acme'], { cwd: dir, env: { DATA_DIR: dataDir } }).exited;
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain(`no gateway is running from DATA_DIR ${dataDir}`);
    expect(cli.stderr).toContain('PORT, HOST, PUBLIC_URL, GATEWAY_CONFIG and DATA_DIR');
    expect(cli.stderr).toContain("there is no tenant 'acme' in built-in demo (tenants that do: demo)");
  }, 120_000);
});
