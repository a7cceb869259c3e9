import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { SourceFactory } from '@mcpgw/core';
import { ConfigError } from '../src/config-error.js';
import { authorizationServerSchema } from '../src/authorization-server-schema.js';
import { loadConfig } from '../src/load-config.js';

// The bootstrap file's `authorizationServer` (docs/configuration.md, `authorizationServer`), through
// loadConfig as the gateway reads it: the client secret from the environment, and the rules beyond the schema.
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
const UPSTREAM = 'https://login.example.com/acme/v2.0';

async function load(tenant: Record<string, unknown>, env: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'gw-as-'));
  const path = join(dir, 'gateway.json');
  const entry = {
    id: 'acme',
    grants: [{ name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 's' }] }],
    sources: [{ id: 's', type: 'folder', root: 'x' }],
    ...tenant,
  };
  await writeFile(path, JSON.stringify({ tenants: [entry] }));
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

const upstream = { issuer: UPSTREAM, clientId: 'gateway', clientSecret: { $env: 'ACME_UPSTREAM_SECRET' } };

describe('tenant authorizationServer', () => {
  it('serves a tenant trusting only its hosted server, the client secret from the environment', async () => {
    const config = await load({ authorizationServer: { upstream } }, { ACME_UPSTREAM_SECRET: 's3cret' });
    const tenant = config.tenants[0]!;
    expect(tenant.authorizationServer?.upstream).toEqual({
      issuer: UPSTREAM,
      clientId: 'gateway',
      clientSecret: 's3cret',
      scopes: ['openid', 'profile', 'email'],
    });
    expect(tenant.authorizationServer?.tokens.accessTokenSeconds).toBe(900);
    // Authenticating (an authenticator with no issuers of its own), never anonymous.
    expect(tenant.anonymous).toBe(false);
    expect(tenant.auth).toEqual({ issuers: [], requiredScopes: [] });
    // The file is stored as written: the secret stays a reference.
    expect(config.declaredTenants[0]).toMatchObject({
      authorizationServer: { upstream: { clientSecret: { $env: 'ACME_UPSTREAM_SECRET' } } },
    });
  });

  it('still needs an issuer or a hosted server for a tenant that authenticates', async () => {
    expect(await issues(load({}))).toContainEqual({
      path: 'tenants[0].auth',
      message: expect.stringContaining('declare the identity providers') as string,
    });
    expect(await issues(load({ auth: { issuers: [] } }))).toContainEqual({
      path: 'tenants[0].auth.issuers',
      message: 'a tenant that authenticates needs at least one issuer',
    });
  });

  it('names the missing environment variable of the client secret', async () => {
    expect(await issues(load({ authorizationServer: { upstream } }))).toContainEqual({
      path: 'tenants[0].authorizationServer.upstream.clientSecret',
      message: 'environment variable ACME_UPSTREAM_SECRET is not set',
    });
  });

  it('allows the demo login only on a loopback bind', async () => {
    const settings = { authorizationServer: { upstream: { demo: true } } };
    await expect(load(settings)).resolves.toBeDefined();
    const offLoopback = { HOST: '0.0.0.0', PUBLIC_URL: 'https://mcp.example.com', SINGLE_REPLICA: 'true' };
    expect(await issues(load(settings, offLoopback))).toContainEqual({
      path: 'tenants[0].authorizationServer.upstream.demo',
      message: 'the demo login is allowed only on a loopback bind, and HOST is 0.0.0.0',
    });
  });

  it('refuses an upstream that is the gateway itself', async () => {
    const self = (issuer: string, env: Record<string, string> = {}) =>
      issues(load({ authorizationServer: { upstream: { issuer, clientId: 'c' } } }, env));
    const circle = expect.stringContaining('another server than this gateway') as string;
    expect(await self('http://127.0.0.1:8080/t/acme/oauth')).toContainEqual({
      path: 'tenants[0].authorizationServer.upstream.issuer',
      message: circle,
    });
    expect(
      await self('https://mcp.example.com/t/other/oauth', {
        HOST: '0.0.0.0',
        PUBLIC_URL: 'https://mcp.example.com',
        SINGLE_REPLICA: 'true',
      }),
    ).toContainEqual({ path: 'tenants[0].authorizationServer.upstream.issuer', message: circle });
    // Another port of the same loopback host is another server.
    await expect(
      load({ authorizationServer: { upstream: { issuer: 'http://127.0.0.1:9090/realms/acme', clientId: 'c' } } }),
    ).resolves.toBeDefined();
  });

  it('offers only scopes the tenant advertises, and every required one', async () => {
    const server = (scopes: string[]) => ({ upstream: { demo: true }, scopes });
    await expect(load({ authorizationServer: server(['mcp:read', 'offline_access']) })).resolves.toBeDefined();
    expect(await issues(load({ authorizationServer: server(['mcp:read', 'mcp:raed']) }))).toEqual([
      {
        path: 'tenants[0].authorizationServer.scopes[1]',
        message: expect.stringContaining(
          '"mcp:raed" is not a scope this tenant uses; it advertises "mcp:read"',
        ) as string,
      },
    ]);
    const required = { auth: { issuers: [], requiredScopes: ['mcp:use'] } };
    expect(await issues(load({ ...required, authorizationServer: server(['mcp:read']) }))).toContainEqual({
      path: 'tenants[0].authorizationServer.scopes',
      message: expect.stringContaining('must offer the required scope "mcp:use"') as string,
    });
  });

  it('bounds the extra claims and keeps the ones the server sets to itself', async () => {
    const extra = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`claim_${i}`, `path${i}`]));
    const server = (claims: unknown) => ({ authorizationServer: { upstream: { demo: true }, claims } });
    expect(await issues(load(server({ extra })))).toEqual([
      { path: 'tenants[0].authorizationServer.claims.extra', message: expect.stringContaining('at most 32') as string },
    ]);
    expect(await issues(load(server({ extra: { aud: 'tid', tenant: 'tid' } })))).toEqual([
      {
        path: 'tenants[0].authorizationServer.claims.extra.aud',
        message: expect.stringContaining('"aud" is a claim the authorization server sets itself') as string,
      },
    ]);
  });

  it('refuses a hosted server on an anonymous tenant', async () => {
    expect(
      await issues(load({ anonymous: true, grants: [], authorizationServer: { upstream: { demo: true } } })),
    ).toContainEqual({
      path: 'tenants[0].authorizationServer',
      message: expect.stringContaining('anonymous') as string,
    });
  });
});

describe('parsed authorization server settings', () => {
  it('validate again unchanged, connector presets included', () => {
    const parsed = authorizationServerSchema.parse({
      upstream: { issuer: 'https://login.example.com/tenant/v2.0', clientId: 'gateway' },
      clients: {
        metadataDocuments: { allow: ['claude', 'https://client.example/metadata.json', 'connector.example'] },
      },
    });
    expect(authorizationServerSchema.parse(parsed)).toEqual(parsed);
    expect(parsed.clients.metadataDocuments).toEqual({
      allow: [{ preset: 'claude' }, 'https://client.example/metadata.json', 'connector.example'],
    });
  });
});
