import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, readEnv } from '@mcpgw/config';
import { createSourceRegistry, demoBootstrap } from '@mcpgw/gateway/testing';

// Cache configuration: REDIS_URL forms, and a source entry's `ttlMs`
// (taken out before the source type's strict schema sees the entry).

async function load(source: Record<string, unknown>) {
  const dir = await mkdtemp(join(tmpdir(), 'gw-cache-config-'));
  await writeFile(
    join(dir, 'gateway.json'),
    JSON.stringify({
      tenants: [{ id: 'acme', anonymous: true, sources: [{ id: 'docs', type: 'static', resources: [], ...source }] }],
    }),
  );
  return loadConfig({
    registry: createSourceRegistry(),
    defaultBootstrap: demoBootstrap(),
    env: { GATEWAY_CONFIG: join(dir, 'gateway.json'), DATA_DIR: dir },
  });
}

async function issues(source: Record<string, unknown>): Promise<ReadonlyArray<{ path: string; message: string }>> {
  const error = await load(source).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).issues;
}

describe('per-source ttlMs', () => {
  it('reaches the source configuration without bothering the type’s strict options schema', async () => {
    const config = await load({ ttlMs: { list: 0, read: 5000 } });
    expect(config.tenants[0]?.sources[0]).toMatchObject({ id: 'docs', ttlMs: { list: 0, read: 5000 } });
    const partial = await load({ ttlMs: { read: 0 } });
    expect(partial.tenants[0]?.sources[0]?.ttlMs).toEqual({ read: 0 });
    const none = await load({});
    expect(none.tenants[0]?.sources[0]?.ttlMs).toBeUndefined();
  });

  it.each([
    [{ list: -1 }, 'tenants[0].sources[0].ttlMs.list'],
    [{ read: 1.5 }, 'tenants[0].sources[0].ttlMs.read'],
    [{ lists: 100 }, 'tenants[0].sources[0].ttlMs'],
    ['60000', 'tenants[0].sources[0].ttlMs'],
  ])('refuses ttlMs %j, naming %s', async (ttlMs, path) => {
    expect((await issues({ ttlMs })).map((issue) => issue.path)).toContain(path);
  });
});

describe('REDIS_URL', () => {
  it.each(['redis://127.0.0.1:6379', 'rediss://user:pw@cache.internal:6380/2', 'redis+cluster://a:7000,b:7001'])(
    'accepts %s',
    (url) => {
      expect(readEnv({ REDIS_URL: url }).REDIS_URL).toBe(url);
    },
  );

  it.each(['127.0.0.1:6379', 'http://127.0.0.1:6379', 'redis://'])('refuses %s', (url) => {
    expect(() => readEnv({ REDIS_URL: url })).toThrow(ConfigError);
  });

  it('is optional: unset means the in-process cache', () => {
    expect(readEnv({}).REDIS_URL).toBeUndefined();
  });
});
