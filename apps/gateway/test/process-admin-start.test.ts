import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { RunningProcess } from './gateway-process.js';
import { MAIN, TOKEN_CLI, runBuilt } from './gateway-process.js';

// What the README's "Try the admin API" promises after `npm start` with no
// configuration (the built-in demo tenant and the development authorization
// server): the built gateway as a process, `npm run token -- --tenant demo
// --admin` from a second shell sharing only DATA_DIR, and a browser sign-in
// from the login URL through the development server to a signed-in session
// that can change something (with its CSRF token).

const README = new URL('../../../README.md', import.meta.url);
const TOKEN_COMMAND = 'npm run --silent token -- --tenant demo --admin';

let dir: string;
let dataDir: string;
let base: string;
let gateway: RunningProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-admin-start-'));
  dataDir = join(dir, 'data');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gateway = runBuilt(MAIN, [], { cwd: dir, env: { PORT: String(port), DATA_DIR: dataDir } });
  await gateway.waitForOutput('gateway listening');
}, 120_000);

afterAll(async () => {
  if (gateway !== undefined) {
    gateway.child.kill('SIGTERM');
    expect((await gateway.exited).code).toBe(0);
  }
  await rm(dir, { recursive: true, force: true });
});

describe('the admin API after npm start', () => {
  it('documents the commands this test runs', async () => {
    const readme = await readFile(README, 'utf8');
    expect(readme).toContain('http://127.0.0.1:8080/admin/v1/tenants/demo/login');
    expect(readme).toContain(`ADMIN_TOKEN=$(${TOKEN_COMMAND})`);
    expect(readme).toContain(
      'curl -s http://127.0.0.1:8080/admin/v1/tenants/demo/status -H "authorization: Bearer $ADMIN_TOKEN"',
    );
  });

  it('accepts the token `npm run token -- --tenant demo --admin` prints', async () => {
    const cli = await runBuilt(TOKEN_CLI, TOKEN_COMMAND.split(' ').slice(5), { cwd: dir, env: { DATA_DIR: dataDir } })
      .exited;
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stderr).toContain(`minting for the gateway running as pid ${gateway.child.pid} at ${base}`);
    const status = await fetch(`${base}/admin/v1/tenants/demo/status`, {
      headers: { authorization: `Bearer ${cli.stdout.trim()}` },
    });
    expect(status.status, await status.clone().text()).toBe(200);
    expect(await status.json()).toMatchObject({ tenant: { id: 'demo' }, runtime: { serving: true } });
    // The MCP token of the same CLI is not an admin credential.
    const mcp = await runBuilt(TOKEN_CLI, ['--tenant', 'demo'], { cwd: dir, env: { DATA_DIR: dataDir } }).exited;
    const refused = await fetch(`${base}/admin/v1/tenants/demo/status`, {
      headers: { authorization: `Bearer ${mcp.stdout.trim()}` },
    });
    expect(refused.status).toBe(401);
  }, 120_000);

  it('signs the demo admin in from the login URL through the development server, ready to write', async () => {
    const jar = new Map<string, string>();
    const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const keep = (response: Response) => {
      for (const set of response.headers.getSetCookie()) {
        const pair = set.split(';', 1)[0] ?? '';
        const at = pair.indexOf('=');
        if (pair.slice(at + 1) === '' || /max-age=0/i.test(set)) jar.delete(pair.slice(0, at));
        else jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
    };
    const login = await fetch(`${base}/admin/v1/tenants/demo/login`, { redirect: 'manual' });
    expect(login.status).toBe(302);
    keep(login);
    const callbackUrl = await followToRedirectUri(
      new URL(login.headers.get('location')!),
      `${base}/admin/v1/tenants/demo/callback`,
    );
    const callback = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: cookie() } });
    expect(callback.status, await callback.clone().text()).toBe(303);
    keep(callback);
    // Where the browser lands: the page naming the signed-in admin and the CSRF token.
    const landing = new URL(callback.headers.get('location')!, base);
    expect(landing.pathname).toBe('/admin/v1/tenants/demo/session');
    const session = await fetch(landing, { headers: { cookie: cookie() } });
    expect(session.status).toBe(200);
    const body = (await session.json()) as { csrfToken: string; principal: unknown };
    expect(body.principal).toMatchObject({ kind: 'tenant-admin', tenantId: 'demo', subject: 'demo-user' });
    const flush = await fetch(`${base}/admin/v1/tenants/demo/cache/flush`, {
      method: 'POST',
      headers: { cookie: cookie(), origin: base, 'x-csrf-token': body.csrfToken },
    });
    expect(flush.status, await flush.clone().text()).toBe(204);
  }, 60_000);
});
