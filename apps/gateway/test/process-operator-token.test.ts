import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { NO_SHEDDING_ENV } from '@mcpgw/test-helpers/gateway';
import { mintAccessToken } from '@mcpgw/authorization-server';
import { MAIN, TOKEN_CLI, runBuilt } from './gateway-process.js';

// `npm start`, then `ADMIN_TOKEN=$(npm run --silent token -- --operator)`:
// on a loopback bind with no OPERATOR_ISSUER, the running development issuer
// is the local operator issuer, so the shipped demo can be administered.

let dir: string;
let dataDir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-operator-token-'));
  dataDir = join(dir, 'data');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Starts the built gateway with `env` on a free port, runs `work` once it listens, and stops it (exit 0). */
async function withGateway(
  env: Record<string, string>,
  work: (port: number, gateway: ReturnType<typeof runBuilt>) => Promise<void>,
): Promise<void> {
  const port = await freePort();
  const gateway = runBuilt(MAIN, [], {
    cwd: dir,
    env: { PORT: String(port), DATA_DIR: dataDir, ...env, ...NO_SHEDDING_ENV },
  });
  try {
    await gateway.waitForOutput('gateway listening');
    await work(port, gateway);
  } finally {
    gateway.child.kill('SIGTERM');
    expect((await gateway.exited).code).toBe(0);
  }
}

const listTenants = (port: number, token: string) =>
  fetch(`http://127.0.0.1:${port}/admin/v1/tenants`, { headers: { authorization: `Bearer ${token}` } });

describe('npm run token -- --operator', () => {
  it('mints an operator token the running demo gateway accepts; a tenant admin token is not one', async () => {
    await withGateway({}, async (port, gateway) => {
      const cli = await runBuilt(TOKEN_CLI, ['--operator'], { cwd: dir, env: { DATA_DIR: dataDir } }).exited;
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stderr).toContain(`minting for the gateway running as pid ${gateway.child.pid}`);
      expect(cli.stderr).toContain(`aud http://127.0.0.1:${port}/admin/v1, gateway-operator in "roles"`);
      const listed = await listTenants(port, cli.stdout.trim());
      expect(listed.status).toBe(200);
      const body = (await listed.json()) as { tenants: { id: string }[] };
      expect(body.tenants.map((tenant) => tenant.id)).toContain('demo');
      // RFC 9728 section 3: the operator resource's metadata names the development issuer as its authorization server.
      const metadata = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/admin/v1`);
      expect(((await metadata.json()) as { authorization_servers: string[] }).authorization_servers).toEqual([
        `http://127.0.0.1:${port}/local-operator`,
      ]);

      // The same issuer and audience without the operator role in "roles": a valid token, but no operator.
      for (const claims of [{}, { roles: ['someone-else'] }, { realm_access: { roles: ['gateway-operator'] } }]) {
        const roleless = await mintAccessToken({
          issuer: `http://127.0.0.1:${port}/local-operator`,
          keystorePath: join(dataDir, 'local-operator', 'keys.json'),
          resource: `http://127.0.0.1:${port}/admin/v1`,
          scope: '',
          claims,
        });
        expect((await listTenants(port, roleless)).status, JSON.stringify(claims)).toBe(403);
      }

      // The demo's own admin: manages the demo tenant, but is no operator.
      const admin = await runBuilt(TOKEN_CLI, ['--tenant', 'demo', '--admin'], { cwd: dir, env: { DATA_DIR: dataDir } })
        .exited;
      expect(admin.code, admin.stderr).toBe(0);
      const refused = await listTenants(port, admin.stdout.trim());
      expect(refused.status).toBe(403);
      const own = await fetch(`http://127.0.0.1:${port}/admin/v1/tenants/demo`, {
        headers: { authorization: `Bearer ${admin.stdout.trim()}` },
      });
      expect(own.status).toBe(200);
    });
  }, 120_000);

  it('puts the role where the running gateway reads it: a nested claim path nests', async () => {
    await withGateway(
      {
        OPERATOR_ROLE_CLAIM: 'realm_access.roles',
        OPERATOR_ROLE: 'platform-admin',
      },
      async (port) => {
        // This shell has neither setting: the running gateway's record says where the role goes.
        const cli = await runBuilt(TOKEN_CLI, ['--operator'], { cwd: dir, env: { DATA_DIR: dataDir } }).exited;
        expect(cli.code, cli.stderr).toBe(0);
        expect(cli.stderr).toContain('platform-admin in "realm_access.roles"');
        expect((await listTenants(port, cli.stdout.trim())).status).toBe(200);
      },
    );
  }, 120_000);

  it('a gateway whose operators sign in elsewhere refuses the development operator token', async () => {
    await withGateway(
      {
        OPERATOR_ISSUER: 'https://idp.example.com/realms/ops',
        OPERATOR_JWKS_URI: 'https://idp.example.com/realms/ops/certs',
      },
      async () => {
        // This shell lacks OPERATOR_ISSUER, but the running gateway's record says it takes no development operator.
        const cli = await runBuilt(TOKEN_CLI, ['--operator'], { cwd: dir, env: { DATA_DIR: dataDir } }).exited;
        expect(cli.code).toBe(2);
        expect(cli.stdout).toBe('');
        expect(cli.stderr).toContain('does not take development operator tokens');
      },
    );
  }, 120_000);

  it('refuses with OPERATOR_ISSUER set: the operator identity provider issues operator tokens', async () => {
    const cli = await runBuilt(TOKEN_CLI, ['--operator'], {
      cwd: dir,
      env: { DATA_DIR: dataDir, OPERATOR_ISSUER: 'https://idp.example.com/realms/ops' },
    }).exited;
    expect(cli.code).toBe(2);
    expect(cli.stdout).toBe('');
    expect(cli.stderr).toContain(
      "OPERATOR_ISSUER is set (https://idp.example.com/realms/ops): operator tokens come from the operator's own identity provider",
    );
  }, 60_000);

  it('refuses on a non-loopback bind: the development issuer is loopback only', async () => {
    const cli = await runBuilt(TOKEN_CLI, ['--operator'], {
      cwd: dir,
      env: { DATA_DIR: dataDir, HOST: '0.0.0.0', PUBLIC_URL: 'https://gateway.example.com', SINGLE_REPLICA: 'true' },
    }).exited;
    expect(cli.code).toBe(2);
    expect(cli.stdout).toBe('');
    expect(cli.stderr).toContain('HOST (0.0.0.0) is not a loopback address');
  }, 60_000);
});
