import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { LightMyRequestResponse } from 'fastify';
import type { RateCounter } from '@mcpgw/cache';
import { createCacheKeys, createRedisRateCounter } from '@mcpgw/cache';
import type { Source, SourceFactory } from '@mcpgw/core';
import { staticSourceFactory } from '@mcpgw/source-static';
import { createSourceRegistry } from '../src/source-registry.js';
import { buildTestApp, type TestApp } from '@mcpgw/test-helpers/gateway';
import { parseExposition } from '@mcpgw/test-helpers/prometheus-text';
import type { LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import type { TestDatabase } from '@mcpgw/test-helpers/postgres';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import type { OwnRedisServer } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';
import {
  deleteNamespace,
  dumpNamespace,
  redisUrl,
  requireRedis,
  startRedisServer,
  testNamespace,
} from '@mcpgw/test-helpers/redis';

// Per-address, per-tenant and per-caller rate
// limits (429, Retry-After, a JSON-RPC body), counted in real Redis and in
// process while Redis is down; load shedding (503); the per-tenant in-flight cap.

const ORIGIN = 'http://127.0.0.1:8080';
const MODERN = { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', host: '127.0.0.1:8080' };
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const docs = (id: string) => ({
  id,
  type: 'static',
  resources: [{ uri: `test://${id}/a`, name: 'a', text: 'hello' }],
});

interface RpcError {
  jsonrpc: string;
  id: null;
  error: { code: number; message: string };
}

function post(
  app: FastifyInstance,
  tenant: string,
  options: { token?: string; ip?: string; method?: string } = {},
): Promise<LightMyRequestResponse> {
  const method = options.method ?? 'resources/list';
  return app.inject({
    method: 'POST',
    url: `/t/${tenant}/mcp`,
    ...(options.ip === undefined ? {} : { remoteAddress: options.ip }),
    headers: {
      ...MODERN,
      'mcp-method': method,
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    },
    payload: { jsonrpc: '2.0', id: 1, method, params: { _meta: META } },
  });
}

const built = new Map<FastifyInstance, TestApp>();

/**
 * A test app (buildTestApp: its own control plane, the document as its
 * bootstrap file). Shedding is off unless `env` sets SHED_*: a late loop on a
 * busy machine must not answer the rate-limit tests' requests.
 */
async function build(
  document: unknown,
  env: Record<string, string>,
  extra: { registry?: ReadonlyMap<string, SourceFactory>; rateCounter?: RateCounter } = {},
): Promise<FastifyInstance> {
  const gateway = await buildTestApp({
    bootstrap: { configDir: '.', document },
    env: { PORT: '8080', ...env },
    ...extra,
  });
  built.set(gateway.app, gateway);
  return gateway.app;
}

/** Closes an app `build` made, and what was opened for it. */
async function close(app: FastifyInstance | undefined): Promise<void> {
  if (app === undefined) return;
  await built.get(app)?.close();
  built.delete(app);
}

/** The tenant's keyed tag, as the gateway names the tenant in its Redis keys. */
const tenantTag = (app: FastifyInstance, tenantId: string) =>
  createCacheKeys({ key: app.settings.keys.cacheKey }).tenantTag(tenantId);

/**
 * A Redis rate counter with a generous deadline: on a busy test machine the
 * 50 ms default would count some requests in process. Given to the app as
 * production's shared counter is.
 */
async function redisCounter(url: string, prefix: string): Promise<RateCounter> {
  const counter = createRedisRateCounter({ redis: { url, commandTimeoutMs: 1000 }, prefix });
  if (!(await counter.ready(5000))) throw new Error(`Redis at ${url} did not answer within 5 s`);
  return counter;
}

/** Refusals as the metrics count them (`mcpgw_rate_limited_total{scope}`, `mcpgw_shed_total`). */
async function refusals(app: FastifyInstance, name: string, labels: Record<string, string> = {}): Promise<number> {
  return parseExposition(await app.metrics.registry.metrics()).value(name, labels);
}

function expectRefusal(response: LightMyRequestResponse, status: number, message: RegExp): void {
  expect(response.statusCode).toBe(status);
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json<RpcError>();
  expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
  expect(body.error.message).toMatch(message);
}

describe('rate limits, counted in Redis', () => {
  let app: FastifyInstance;
  let counter: RateCounter;
  let idp: LocalIssuer;
  const namespace = testNamespace('rate-limit');

  beforeAll(async () => {
    await requireRedis();
    idp = await startLocalIssuer({ path: '/limits-idp' });
    counter = await redisCounter(redisUrl(), `${namespace}:`);
    app = await build(
      {
        tenants: [
          {
            id: 'acme',
            auth: { issuers: [{ issuer: idp.issuer, jwksUri: idp.jwksUri }] },
            grants: [{ name: 'everyone', match: {}, allow: [{ source: 'docs' }] }],
            sources: [docs('docs')],
            limits: { perPrincipalPerMinute: 2 },
          },
          { id: 'busy', anonymous: true, sources: [docs('docs')], limits: { requestsPerMinute: 3 } },
          { id: 'calm', anonymous: true, sources: [docs('docs')] },
        ],
      },
      { REDIS_URL: redisUrl(), RATE_LIMIT_IP_PER_MINUTE: '2' },
      // The counters under the test's own namespace.
      { rateCounter: counter },
    );
  });
  afterAll(async () => {
    await close(app);
    await counter?.close();
    await idp?.close();
    await deleteNamespace(namespace);
  });

  const token = (sub: string) => idp.token({ aud: `${ORIGIN}/t/acme/mcp`, sub });

  it('refuses an address over its limit before any token work (no JWKS fetch), and exempts loopback', async () => {
    const ip = '203.0.113.7';
    // First in this file: the gateway has fetched no JWKS yet, so verifying any token would fetch it.
    const valid = await token('carol');
    expect((await post(app, 'nobody', { ip })).statusCode).toBe(404);
    expect((await post(app, 'acme', { ip })).statusCode).toBe(401);
    const fetches = idp.hitCount('/jwks');
    expect(fetches).toBe(0);
    // Third request from the address: refused before the tenant or the token is looked at.
    expectRefusal(await post(app, 'acme', { ip, token: valid }), 429, /\(per client address\)/);
    expectRefusal(await post(app, 'nobody', { ip }), 429, /\(per client address\)/);
    expect(idp.hitCount('/jwks')).toBe(fetches);
    expect(await refusals(app, 'mcpgw_rate_limited_total', { scope: 'ip' })).toBe(2);
    // The same token from another address is verified, and that does fetch: the count above means something.
    expect((await post(app, 'acme', { ip: '203.0.113.8', token: valid })).statusCode).toBe(200);
    expect(idp.hitCount('/jwks')).toBeGreaterThan(fetches);
    // Loopback peers (local tools, the tests themselves) are exempt from the per-address limit.
    for (let i = 0; i < 5; i += 1) expect((await post(app, 'calm')).statusCode).toBe(200);
  });

  it('refuses a tenant over its requestsPerMinute with 429, Retry-After and a JSON-RPC error; other tenants go on', async () => {
    for (let i = 0; i < 3; i += 1) expect((await post(app, 'busy')).statusCode).toBe(200);
    expectRefusal(await post(app, 'busy'), 429, /^Rate limit exceeded \(per tenant\): retry after \d+ s$/);
    expect((await post(app, 'calm')).statusCode).toBe(200);
    // The count is shared through Redis (every replica sees it), under the tenant's keyed tag:
    // no key names the tenant in the clear.
    const keys = await dumpNamespace(namespace);
    expect(keys.get(`${namespace}:tenant:${tenantTag(app, 'busy')}`)).toBe('4');
    expect([...keys.keys()].filter((key) => key.includes('busy'))).toEqual([]);
    expect(await refusals(app, 'mcpgw_rate_limited_total', { scope: 'tenant' })).toBe(1);
  });

  it('refuses one caller over perPrincipalPerMinute; another caller of the tenant goes on', async () => {
    const alice = await token('alice');
    expect((await post(app, 'acme', { token: alice })).statusCode).toBe(200);
    expect((await post(app, 'acme', { token: alice })).statusCode).toBe(200);
    expectRefusal(await post(app, 'acme', { token: alice }), 429, /\(per caller\)/);
    expect((await post(app, 'acme', { token: await token('bob') })).statusCode).toBe(200);
    expect(await refusals(app, 'mcpgw_rate_limited_total', { scope: 'principal' })).toBe(1);
  });
});

describe('rate limits while Redis is down', () => {
  let app: FastifyInstance;
  let redis: OwnRedisServer;
  let counter: RateCounter;

  beforeAll(async () => {
    redis = await startRedisServer();
    // The gateway's own key prefix, on a Redis of the test's own.
    counter = await redisCounter(redis.url, 'mcpgw:rl:');
    app = await build(
      {
        tenants: [
          { id: 'open', anonymous: true, sources: [docs('docs')] },
          { id: 'tight', anonymous: true, sources: [docs('docs')], limits: { requestsPerMinute: 5 } },
        ],
      },
      { REDIS_URL: redis.url, RATE_LIMIT_TENANT_PER_MINUTE: '100000' },
      { rateCounter: counter },
    );
  });
  afterAll(async () => {
    await close(app);
    await counter?.close();
    await redis?.close();
  });

  it('fails no request when Redis stops under load, and keeps limiting in process', async () => {
    // Non-loopback callers, so the gateway-wide default counts (in Redis) for every request.
    const load = (n: number, offset: number) =>
      Array.from({ length: n }, (_, i) => post(app, 'open', { ip: `198.51.100.${(offset + i) % 250}` }));
    const before = await Promise.all(load(20, 0));
    expect(before.map((response) => response.statusCode)).toEqual(Array(20).fill(200));
    expect((await dumpNamespace('mcpgw', redis.url)).get(`mcpgw:rl:tenant:${tenantTag(app, 'open')}`)).toBe('20');
    expect((await post(app, 'tight')).statusCode).toBe(200);

    const during = load(60, 20);
    await redis.kill();
    const after = load(60, 80);
    const statuses = (await Promise.all([...during, ...after])).map((response) => response.statusCode);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    // Redis is gone: the tight tenant's limit is counted in this process instead (a fresh window).
    const tight = [];
    for (let i = 0; i < 7; i += 1) tight.push((await post(app, 'tight')).statusCode);
    expect(tight).toEqual([200, 200, 200, 200, 200, 429, 429]);
  });
});

describe('load shedding', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = await build(
      { tenants: [{ id: 'calm', anonymous: true, sources: [docs('docs')] }] },
      { SHED_EVENT_LOOP_DELAY_MS: '40' },
    );
  });
  afterAll(() => close(app));

  it('answers 503 with Retry-After and a JSON-RPC body while the event loop is late; health stays up', async () => {
    expect((await post(app, 'calm')).statusCode).toBe(200);
    // Keep the loop busy in 100 ms slices, as a replica far past its capacity is.
    const hog = setInterval(() => {
      const until = Date.now() + 100;
      while (Date.now() < until);
    }, 1);
    try {
      // Refused once a sample taken wholly after the start shows the loop late (see the next test).
      await within(
        10_000,
        async () => expectRefusal(await post(app, 'calm'), 503, /^The gateway is overloaded \(event loop delayed\)/),
        'a shed request',
      );
      expect(
        (await app.inject({ method: 'GET', url: '/healthz', headers: { host: '127.0.0.1:8080' } })).statusCode,
      ).toBe(200);
    } finally {
      clearInterval(hog);
    }
    expect(app.limits.shedding.shed).toBeGreaterThan(0);
    expect(await refusals(app, 'mcpgw_shed_total')).toBe(app.limits.shedding.shed);
    await within(10_000, () => expect(app.isUnderPressure()).toBe(false), 'no longer under pressure');
    expect((await post(app, 'calm')).statusCode).toBe(200);
  });
});

describe('load shedding right after start', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = await build(
      { tenants: [{ id: 'calm', anonymous: true, sources: [docs('docs')] }] },
      { SHED_EVENT_LOOP_DELAY_MS: '200' },
    );
  });
  afterAll(() => close(app));

  it("answers an idle replica's first requests although its start kept the loop busy", async () => {
    // The rest of a start on a loaded machine (module loading, embedded-database queries), after the
    // sampler began: a second and a half without a turn of the loop, none of it serving.
    const until = performance.now() + 1500;
    while (performance.now() < until);
    await app.ready();
    // The sampled mean now covers the start...
    await within(5_000, () => expect(app.memoryUsage().eventLoopDelay).toBeGreaterThan(200), 'the start sampled');
    // ...which is no load: the replica is idle and answers.
    const response = await post(app, 'calm');
    expect(response.statusCode).toBe(200);
    expect(app.limits.shedding.shed).toBe(0);
  });
});

describe('load shedding on a stalled loop turn (SHED_EVENT_LOOP_STALL_MS)', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = await build(
      { tenants: [{ id: 'calm', anonymous: true, sources: [docs('docs')] }] },
      { SHED_EVENT_LOOP_DELAY_MS: '0', SHED_EVENT_LOOP_STALL_MS: '50' },
    );
  });
  afterAll(() => close(app));

  it('refuses a request read after the loop has been busy past the threshold, not the next calm one', async () => {
    const calm = async () => expect((await post(app, 'calm')).statusCode).toBe(200);
    // Once the turns after the app's start are on time.
    await within(10_000, calm, 'an admitted request');
    const shed = app.limits.shedding.shed;
    // This turn runs 120 ms before the request is read, as the tail of a turn crowded with requests does.
    const until = performance.now() + 120;
    while (performance.now() < until);
    expectRefusal(await post(app, 'calm'), 503, /^The gateway is overloaded \(event loop stalled\)/);
    expect(app.limits.shedding.shed).toBe(shed + 1);
    // Turns on time again: admitted, with no sampling period to wait out.
    await within(10_000, calm, 'an admitted request');
  });
});

describe('per-tenant in-flight cap (bulkhead)', () => {
  let app: FastifyInstance;
  const gates: Array<() => void> = [];
  let open = false;

  /** The static source type, except that listings wait until the test opens the gate: a hung backend. */
  const gatedFactory: SourceFactory = {
    type: 'gated',
    optionsSchema: staticSourceFactory.optionsSchema,
    model: staticSourceFactory.model,
    async create(options, context): Promise<Source> {
      const source = await staticSourceFactory.create(options as never, context);
      return new Proxy(source, {
        get: (target, key) =>
          key === 'listResources'
            ? async (...args: Parameters<Source['listResources']>) => {
                if (!open) await new Promise<void>((resolve) => gates.push(resolve));
                return target.listResources(...args);
              }
            : Reflect.get(target, key),
      });
    },
  };

  beforeAll(async () => {
    app = await build(
      {
        tenants: [
          { id: 'slow', anonymous: true, sources: [{ ...docs('docs'), type: 'gated' }], limits: { maxInFlight: 2 } },
          { id: 'fast', anonymous: true, sources: [docs('docs')] },
        ],
      },
      {},
      { registry: new Map([...createSourceRegistry(), [gatedFactory.type, gatedFactory]]) },
    );
  });
  afterAll(() => close(app));

  it("refuses a tenant's requests past its cap at once, while another tenant's never wait on its slots", async () => {
    const held = [post(app, 'slow'), post(app, 'slow')];
    await within(10_000, () => expect(app.limits.inFlight.count('slow')).toBe(2), 'two slow requests in flight');
    // The slow tenant's backend hangs: its third request is refused, not queued.
    expectRefusal(await post(app, 'slow'), 503, /too many requests of this tenant in flight/);
    // The other tenant is served in full, several at a time, while the slow one holds its slots.
    const fast = await Promise.all([post(app, 'fast'), post(app, 'fast'), post(app, 'fast')]);
    expect(fast.map((response) => response.statusCode)).toEqual([200, 200, 200]);
    expect(app.limits.inFlight.count('slow')).toBe(2);

    open = true;
    while (gates.length > 0) gates.shift()?.();
    expect((await Promise.all(held)).map((response) => response.statusCode)).toEqual([200, 200]);
    await within(10_000, () => expect(app.limits.inFlight.count('slow')).toBe(0), 'the slow slots given back');
    expect((await post(app, 'slow')).statusCode).toBe(200);
  });
});

describe('limits of a tenant served from the control plane', () => {
  let app: FastifyInstance;
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase('limits_control_plane');
    app = await build(
      { tenants: [{ id: 'busy', anonymous: true, sources: [docs('docs')], limits: { requestsPerMinute: 2 } }] },
      { DATABASE_URL: database.url },
    );
  });
  afterAll(async () => {
    await close(app);
    await database?.drop();
  });

  it("keeps the bootstrap file's limits through the store", async () => {
    expect((await post(app, 'busy')).statusCode).toBe(200);
    expect((await post(app, 'busy')).statusCode).toBe(200);
    expectRefusal(await post(app, 'busy'), 429, /\(per tenant\)/);
  });
});
