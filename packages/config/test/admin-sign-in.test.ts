import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { SourceFactory } from '@mcpgw/core';
import { ConfigError } from '../src/config-error.js';
import { loadConfig } from '../src/load-config.js';

// The bootstrap file's `adminSignIn` (docs/admin-sign-in.md), through loadConfig as the gateway reads it.
const factory: SourceFactory<{ root: string }> = {
  type: 'folder',
  optionsSchema: z.strictObject({ root: z.string().min(1) }),
  model: { credentials: [], targets: [], operatorOnly: true },
  create: () => {
    throw new Error('not used');
  },
};
const registry = new Map<string, SourceFactory>([['folder', factory as SourceFactory]]);
const demo = { document: { tenants: [] }, configDir: '/demo' };
const ISSUER = 'https://idp.example.com/realms/acme';

async function load(adminSignIn: unknown, env: Record<string, string> = {}, overrides: Record<string, unknown> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'gw-sign-in-'));
  const path = join(dir, 'gateway.json');
  const tenant = {
    id: 'acme',
    auth: { issuers: [{ issuer: ISSUER, discovery: true }] },
    sources: [{ id: 's', type: 'folder', root: 'x' }],
    adminSignIn,
    ...overrides,
  };
  await writeFile(path, JSON.stringify({ tenants: [tenant] }));
  return loadConfig({ registry, defaultBootstrap: demo, env: { GATEWAY_CONFIG: path, PORT: '8080', ...env } });
}

async function issues(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).issues;
}

describe('tenant adminSignIn', () => {
  it('fills in the defaults and resolves the client secret from the environment', async () => {
    const config = await load(
      { clientId: 'gateway-admin', clientSecret: { $env: 'ACME_ADMIN_SECRET' } },
      { ACME_ADMIN_SECRET: 's3cret' },
    );
    expect(config.tenants[0]?.adminSignIn).toEqual({
      clientId: 'gateway-admin',
      clientSecret: 's3cret',
      scopes: ['openid'],
      maxSessionSeconds: 28_800,
    });
  });

  it('names the missing environment variable of the secret', async () => {
    expect(await issues(load({ clientId: 'c', clientSecret: { $env: 'NOT_SET_ANYWHERE' } }))).toContainEqual({
      path: 'tenants[0].adminSignIn.clientSecret',
      message: 'environment variable NOT_SET_ANYWHERE is not set',
    });
  });

  it('refuses an issuer the tenant does not trust, unknown keys and bad values, naming each path', async () => {
    expect(await issues(load({ clientId: 'c', issuer: 'https://other.example.com' }))).toContainEqual({
      path: 'tenants[0].adminSignIn.issuer',
      message: `must be one of the tenant's issuers (${ISSUER})`,
    });
    const paths = (await issues(load({ clientId: '', scopes: ['a b'], maxSessionSeconds: 5, extra: 1 }))).map(
      (issue) => issue.path,
    );
    expect(paths).toEqual(
      expect.arrayContaining([
        'tenants[0].adminSignIn.clientId',
        'tenants[0].adminSignIn.scopes[0]',
        'tenants[0].adminSignIn.maxSessionSeconds',
        'tenants[0].adminSignIn',
      ]),
    );
  });

  it("takes the tenant's hosted issuer, unlisted in auth.issuers, and only that tenant's", async () => {
    const hosted = {
      authorizationServer: { upstream: { issuer: ISSUER, clientId: 'gw', clientSecret: 'upstream secret' } },
      auth: { issuers: [] },
    };
    const env = { PUBLIC_URL: 'https://mcp.example.com' };
    const config = await load({ clientId: 'c', issuer: 'https://mcp.example.com/t/acme/oauth' }, env, hosted);
    expect(config.tenants[0]?.adminSignIn?.issuer).toBe('https://mcp.example.com/t/acme/oauth');
    expect(
      await issues(load({ clientId: 'c', issuer: 'https://mcp.example.com/t/beta/oauth' }, env, hosted)),
    ).toContainEqual({
      path: 'tenants[0].adminSignIn',
      message:
        'browser sign-in needs the tenant to trust an issuer (auth.issuers), or adminSignIn.issuer set to its hosted issuer https://mcp.example.com/t/acme/oauth',
    });
    // Without a hosted server of its own, the URL is no issuer of the tenant.
    expect(await issues(load({ clientId: 'c', issuer: 'https://mcp.example.com/t/acme/oauth' }, env))).toContainEqual({
      path: 'tenants[0].adminSignIn.issuer',
      message: `must be one of the tenant's issuers (${ISSUER})`,
    });
  });

  it('is absent when not configured', async () => {
    expect((await load(undefined)).tenants[0]?.adminSignIn).toBeUndefined();
  });
});
