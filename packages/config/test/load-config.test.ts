import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { SourceFactory } from '@mcpgw/core';
import { ConfigError } from '../src/config-error.js';
import { ENV_KEYS, readEnv } from '../src/env.js';
import { loadConfig } from '../src/load-config.js';

// A source type whose options schema is real zod, so errors carry real paths.
const fakeFactory: SourceFactory<{ root: string }> = {
  type: 'folder',
  optionsSchema: z.strictObject({ root: z.string().min(1) }),
  model: { credentials: [], targets: [], operatorOnly: true },
  create: () => {
    throw new Error('not used');
  },
};
const registry = new Map<string, SourceFactory>([['folder', fakeFactory as SourceFactory]]);
const demo = {
  document: { tenants: [{ id: 'demo', anonymous: true, sources: [{ id: 's', type: 'folder', root: 'x' }] }] },
  configDir: '/demo',
};

async function writeConfig(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-config-'));
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

async function configError(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('environment', () => {
  it('applies the documented defaults', () => {
    expect(readEnv({})).toMatchObject({ HOST: '127.0.0.1', PORT: 8080, LOG_LEVEL: 'info', ALLOWED_ORIGINS: [] });
  });

  it('names each bad key', () => {
    expect(() => readEnv({ PORT: 'eighty', LOG_LEVEL: 'loud', ALLOWED_ORIGINS: 'https://a.example/path' })).toThrow(
      expect.objectContaining({
        issues: expect.arrayContaining([
          expect.objectContaining({ path: 'env.PORT' }),
          expect.objectContaining({ path: 'env.LOG_LEVEL' }),
          expect.objectContaining({ path: 'env.ALLOWED_ORIGINS[0]' }),
        ]),
      }),
    );
  });

  it('reads TRUSTED_PROXIES as addresses and CIDR blocks, and names a bad entry', () => {
    expect(readEnv({}).TRUSTED_PROXIES).toEqual([]);
    expect(readEnv({ TRUSTED_PROXIES: ' 10.0.0.0/8, 127.0.0.1 ,fd00::/8,' }).TRUSTED_PROXIES).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'fd00::/8',
    ]);
    for (const bad of ['proxy.internal', '10.0.0.0/33', '10.0.0.1/8/8', '::1/129', '10.0.0.0/']) {
      expect(() => readEnv({ TRUSTED_PROXIES: `127.0.0.1,${bad}` })).toThrow(
        expect.objectContaining({
          issues: [expect.objectContaining({ path: 'env.TRUSTED_PROXIES[1]', message: expect.stringMatching(/CIDR/) })],
        }),
      );
    }
  });

  it('requires PUBLIC_URL off loopback', () => {
    expect(() => readEnv({ HOST: '0.0.0.0', SINGLE_REPLICA: 'true' })).toThrow(/PUBLIC_URL/);
    expect(
      readEnv({ HOST: '0.0.0.0', PUBLIC_URL: 'https://mcp.example.com/', SINGLE_REPLICA: 'true' }).PUBLIC_URL,
    ).toBe('https://mcp.example.com');
  });

  it('lets the real environment win over .env, which fills in the rest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-env-'));
    await writeFile(join(dir, '.env'), 'PORT=9999\nLOG_LEVEL=debug\n');
    expect(readEnv({ PORT: '7000' }, dir)).toMatchObject({ PORT: 7000, LOG_LEVEL: 'debug' });
  });

  it('.env.example lists exactly the keys of the schema', async () => {
    const text = await readFile(new URL('../../../.env.example', import.meta.url), 'utf8');
    const keys = text
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.split('=')[0]);
    expect(keys.sort()).toEqual([...ENV_KEYS].sort());
  });
});

describe('bootstrap file', () => {
  it('uses the built-in demo without GATEWAY_CONFIG', async () => {
    const config = await loadConfig({ registry, defaultBootstrap: demo, env: {} });
    expect(config.origin).toBe('built-in demo');
    expect(config.tenants).toEqual([
      {
        id: 'demo',
        name: 'demo',
        anonymous: true,
        grants: [],
        sources: [{ id: 's', type: 'folder', options: { root: 'x' } }],
      },
    ]);
  });

  it('reads YAML and resolves $env references', async () => {
    const path = await writeConfig(
      'gw.yaml',
      'tenants:\n  - id: acme\n    name: Acme\n    anonymous: true\n    sources:\n      - id: docs\n        type: folder\n        root: { $env: DOCS_ROOT }\n',
    );
    const config = await loadConfig({
      registry,
      defaultBootstrap: demo,
      env: { GATEWAY_CONFIG: path, DOCS_ROOT: '/srv/docs' },
    });
    expect(config.tenants[0]?.sources[0]?.options).toEqual({ root: '/srv/docs' });
    expect(config.configDir).toBe(join(path, '..'));
  });

  it('reports every problem with its path, and applies nothing', async () => {
    const path = await writeConfig(
      'gw.json',
      JSON.stringify({
        tenants: [
          { id: 'Acme!', anonymous: true, sources: [{ id: 'a', type: 'folder', root: '' }] },
          {
            id: 'b',
            anonymous: true,
            sources: [
              { id: 'x', type: 'nope' },
              { id: 'y', type: 'folder', root: 'r', extra: 1 },
            ],
          },
        ],
      }),
    );
    const error = await configError(loadConfig({ registry, defaultBootstrap: demo, env: { GATEWAY_CONFIG: path } }));
    expect(error.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['tenants[0].id']));
    const second = await writeConfig(
      'gw.json',
      JSON.stringify({
        tenants: [
          {
            id: 'b',
            anonymous: true,
            sources: [
              { id: 'x', type: 'nope' },
              { id: 'y', type: 'folder', root: 'r', extra: 1 },
              { id: 'z', type: 'folder', root: { $env: 'MISSING_VAR' } },
            ],
          },
        ],
      }),
    );
    const error2 = await configError(loadConfig({ registry, defaultBootstrap: demo, env: { GATEWAY_CONFIG: second } }));
    expect(error2.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'tenants[0].sources[0].type', message: expect.stringContaining('folder') }),
        expect.objectContaining({ path: 'tenants[0].sources[1]', message: expect.stringContaining('extra') }),
        expect.objectContaining({
          path: 'tenants[0].sources[2].root',
          message: 'environment variable MISSING_VAR is not set',
        }),
      ]),
    );
  });

  it('refuses duplicate ids, unreadable files and malformed JSON', async () => {
    const dup = await writeConfig(
      'gw.json',
      JSON.stringify({
        tenants: [
          {
            id: 'a',
            anonymous: true,
            sources: [
              { id: 's', type: 'folder', root: 'r' },
              { id: 's', type: 'folder', root: 'r' },
            ],
          },
          { id: 'a', anonymous: true, sources: [{ id: 's', type: 'folder', root: 'r' }] },
        ],
      }),
    );
    const error = await configError(loadConfig({ registry, defaultBootstrap: demo, env: { GATEWAY_CONFIG: dup } }));
    expect(error.issues.map((i) => i.path)).toEqual(['tenants[0].sources[1].id', 'tenants[1].id']);
    await configError(
      loadConfig({ registry, defaultBootstrap: demo, env: { GATEWAY_CONFIG: '/nonexistent/gw.json' } }),
    );
    const bad = await writeConfig('gw.json', '{ "tenants": [ ');
    const parse = await configError(loadConfig({ registry, defaultBootstrap: demo, env: { GATEWAY_CONFIG: bad } }));
    expect(parse.message).toMatch(/not valid JSON/);
  });

  it('refuses an anonymous tenant off loopback, and a tenant without authentication', async () => {
    const error = await configError(
      loadConfig({
        registry,
        defaultBootstrap: demo,
        env: { HOST: '0.0.0.0', PUBLIC_URL: 'https://gw.example.com', SINGLE_REPLICA: 'true' },
      }),
    );
    expect(error.issues).toEqual([
      expect.objectContaining({ path: 'tenants[0].anonymous', message: expect.stringContaining('loopback') }),
    ]);
    const closed = {
      document: { tenants: [{ id: 'x', sources: [{ id: 's', type: 'folder', root: 'r' }] }] },
      configDir: '/',
    };
    await configError(loadConfig({ registry, defaultBootstrap: closed, env: {} }));
  });
});

describe('authentication and grants', () => {
  const source = [{ id: 'docs', type: 'folder', root: 'r' }];
  const idp = { issuer: 'https://idp.example.com/', jwksUri: 'https://idp.example.com/jwks' };
  const load = (tenants: unknown[], env: Record<string, string> = {}) =>
    loadConfig({ registry, defaultBootstrap: { document: { tenants }, configDir: '/' }, env });

  it('applies issuer defaults and keeps grants', async () => {
    const config = await load([
      {
        id: 'acme',
        auth: { issuers: [idp], requiredScopes: ['mcp:read'] },
        grants: [{ name: 'all', match: {}, allow: [{ source: 'docs' }] }],
        sources: source,
      },
    ]);
    expect(config.tenants[0]?.auth?.issuers[0]).toMatchObject({
      issuer: 'https://idp.example.com/',
      algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      // RFC 9068 section 4: only access tokens by default, never an ID token's `JWT` or no typ.
      tokenTypes: ['at+jwt'],
      scopeClaim: 'scope',
      clockToleranceSeconds: 30,
    });
    expect(config.tenants[0]?.grants).toEqual([{ name: 'all', match: {}, allow: [{ source: 'docs' }] }]);
  });

  it.each([
    [
      'anonymous beside auth',
      [{ id: 'a', anonymous: true, auth: { issuers: [idp] }, sources: source }],
      'tenants[0].auth',
    ],
    [
      'grants on an anonymous tenant',
      [{ id: 'a', anonymous: true, grants: [{ name: 'g', match: {}, allow: [{ source: 'docs' }] }], sources: source }],
      'tenants[0].grants',
    ],
    [
      'a grant naming no source of the tenant',
      [
        {
          id: 'a',
          auth: { issuers: [idp] },
          grants: [{ name: 'g', match: {}, allow: [{ source: 'nope' }] }],
          sources: source,
        },
      ],
      'tenants[0].grants[0].allow[0].source',
    ],
    [
      'a symmetric algorithm',
      [{ id: 'a', auth: { issuers: [{ ...idp, algorithms: ['HS256'] }] }, sources: source }],
      'tenants[0].auth.issuers[0]',
    ],
    [
      'two key sources',
      [{ id: 'a', auth: { issuers: [{ ...idp, discovery: true }] }, sources: source }],
      'tenants[0].auth.issuers[0]',
    ],
    [
      'a private key in a pinned JWKS',
      [
        {
          id: 'a',
          auth: { issuers: [{ issuer: idp.issuer, jwks: { keys: [{ kty: 'EC', d: 'secret' }] } }] },
          sources: source,
        },
      ],
      'tenants[0].auth.issuers[0]',
    ],
    [
      'a plain-http issuer off loopback',
      [{ id: 'a', auth: { issuers: [{ issuer: 'http://idp.example.com', discovery: true }] }, sources: source }],
      'tenants[0].auth.issuers[0]',
    ],
    [
      'the development issuer beside a real one',
      [
        { id: 'a', auth: { issuers: [{ development: true }] }, sources: source },
        { id: 'b', auth: { issuers: [idp] }, sources: source },
      ],
      'tenants[0].auth.issuers[0]',
    ],
  ])('refuses %s', async (_name, tenants, path) => {
    const error = await configError(load(tenants));
    expect(error.issues.map((i) => i.path)).toContainEqual(expect.stringContaining(path));
  });

  describe('introspection without an audience', () => {
    const introspection = {
      endpoint: 'https://idp.example.com/introspect',
      clientId: 'gateway',
      clientSecret: 'secret',
    };
    const withIntrospection = (extra: Record<string, unknown>) => [
      { id: 'a', auth: { issuers: [{ ...idp, introspection: { ...introspection, ...extra } }] }, sources: source },
    ];

    it('is refused by default; the opt-in is off unless given', async () => {
      const config = await load(withIntrospection({}));
      expect(config.tenants[0]?.auth?.issuers[0]).toMatchObject({
        introspection: { dangerouslyAcceptMissingAudience: false },
      });
    });

    it.each([
      ['without clientIds', {}, /needs "clientIds", a non-empty list of the clients/],
      ['with an empty clientIds', { clientIds: [] }, /clientIds: Too small/],
    ])('dangerouslyAcceptMissingAudience %s is refused with the reason', async (_name, extra, reason) => {
      const error = await configError(load(withIntrospection({ dangerouslyAcceptMissingAudience: true, ...extra })));
      expect(error.message).toContain('tenants[0].auth.issuers[0].introspection.clientIds');
      expect(error.message).toMatch(reason);
    });

    it('dangerouslyAcceptMissingAudience with a clientIds allowlist loads', async () => {
      const config = await load(
        withIntrospection({ dangerouslyAcceptMissingAudience: true, clientIds: ['claude-connector'] }),
      );
      expect(config.tenants[0]?.auth?.issuers[0]).toMatchObject({
        introspection: { dangerouslyAcceptMissingAudience: true, clientIds: ['claude-connector'] },
      });
    });
  });

  it('refuses the development issuer off loopback, and port 0 without PUBLIC_URL', async () => {
    const dev = [{ id: 'a', auth: { issuers: [{ development: true }] }, sources: source }];
    const offLoopback = await configError(
      load(dev, { HOST: '0.0.0.0', PUBLIC_URL: 'https://gw.example.com', SINGLE_REPLICA: 'true' }),
    );
    expect(offLoopback.issues).toContainEqual(
      expect.objectContaining({ message: expect.stringContaining('loopback') }),
    );
    const portZero = await configError(load(dev, { PORT: '0' }));
    expect(portZero.issues).toContainEqual(expect.objectContaining({ path: 'env.PUBLIC_URL' }));
  });
});

describe('limits', () => {
  const withLimits = (limits: unknown) => ({
    configDir: '/demo',
    document: { tenants: [{ id: 'demo', anonymous: true, sources: [{ id: 's', type: 'folder', root: 'x' }], limits }] },
  });

  it('takes a tenant limits object and the gateway-wide defaults', async () => {
    const config = await loadConfig({
      registry,
      defaultBootstrap: withLimits({ requestsPerMinute: 120, maxInFlight: 0 }),
      env: { RATE_LIMIT_IP_PER_MINUTE: '600' },
    });
    expect(config.tenants[0]?.limits).toEqual({ requestsPerMinute: 120, maxInFlight: 0 });
    expect(config.env).toMatchObject({
      RATE_LIMIT_IP_PER_MINUTE: 600,
      RATE_LIMIT_TENANT_PER_MINUTE: 60_000,
      RATE_LIMIT_PRINCIPAL_PER_MINUTE: 6_000,
      TENANT_MAX_IN_FLIGHT: 256,
      SHED_EVENT_LOOP_DELAY_MS: 200,
      SHED_EVENT_LOOP_UTILIZATION: 0,
    });
  });

  it('names each bad limit by its path', async () => {
    const error = await configError(
      loadConfig({
        registry,
        defaultBootstrap: withLimits({ requestsPerMinute: -1, perPrincipalPerMinute: 1.5, perMinute: 3 }),
        env: {},
      }),
    );
    expect(error.issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining([
        'tenants[0].limits.requestsPerMinute',
        'tenants[0].limits.perPrincipalPerMinute',
        'tenants[0].limits',
      ]),
    );
    expect(() => readEnv({ RATE_LIMIT_TENANT_PER_MINUTE: 'lots', SHED_EVENT_LOOP_UTILIZATION: '1.5' })).toThrow(
      expect.objectContaining({
        issues: expect.arrayContaining([
          expect.objectContaining({ path: 'env.RATE_LIMIT_TENANT_PER_MINUTE' }),
          expect.objectContaining({ path: 'env.SHED_EVENT_LOOP_UTILIZATION' }),
        ]),
      }),
    );
  });
});
