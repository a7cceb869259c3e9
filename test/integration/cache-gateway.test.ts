import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCacheKeys } from '@mcpgw/cache';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { deleteNamespace, dumpNamespace, inspector, redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import { createServerKeys } from '@mcpgw/core';

// Caching through the real gateway with REDIS_URL set: real tokens from two
// real issuers, real grants, real Redis. A second identical request is served
// from the cache (the metrics say so and the backend-shaped answer is
// identical), principals and tenants stay apart, an MRTR retry bypasses the
// cache, and nothing in Redis names a principal, a token or a resource.

// A fixed secret for this run only: the test derives the same key layout to find (and remove) exactly its keys.
const SECRETS_KEY = randomBytes(24).toString('base64url');
const SUBJECT_ALICE = 'alice-subject-3f9c';
const SUBJECT_BOB = 'bob-subject-7d21';
const GROUP = 'finance-team-b8e4';
const SECRET_TEXT = 'quarterly-numbers-6a0e';

let gateway: StartedGateway;
let idpA: LocalIssuer;
let idpB: LocalIssuer;
const tokens: string[] = [];

const resource = (tenant: string) => `${gateway.baseUrl}/t/${tenant}/mcp`;

beforeAll(async () => {
  await requireRedis();
  idpA = await startLocalIssuer({ path: '/idp-a' });
  idpB = await startLocalIssuer({ path: '/idp-b' });
  const doc = (source: string, path: string, text: string) => ({ uri: `test://${source}/${path}`, name: path, text });
  const config = {
    tenants: [
      {
        id: 'acme',
        auth: {
          issuers: [{ issuer: idpA.issuer, jwksUri: idpA.jwksUri, groupsClaim: 'groups' }],
          requiredScopes: ['mcp:read'],
        },
        grants: [
          {
            name: 'readers',
            match: { scopes: ['mcp:read'] },
            allow: [{ source: 'docs', uris: ['test://docs/pub/**'] }],
          },
          { name: 'finance', match: { groups: [GROUP] }, allow: [{ source: 'docs' }] },
        ],
        sources: [
          {
            id: 'docs',
            type: 'static',
            ttlMs: { list: 45_000, read: 20_000 },
            resources: [
              doc('docs', 'pub/handbook', 'welcome'),
              doc('docs', 'pub/holidays', 'dates'),
              doc('docs', 'priv/ledger', SECRET_TEXT),
            ],
          },
        ],
      },
      {
        id: 'globex',
        auth: { issuers: [{ issuer: idpB.issuer, jwksUri: idpB.jwksUri }], requiredScopes: ['mcp:read'] },
        grants: [{ name: 'all', match: {}, allow: [{ source: 'docs' }] }],
        sources: [{ id: 'docs', type: 'static', resources: [doc('docs', 'pub/handbook', 'globex handbook')] }],
      },
    ],
  };
  const dir = await mkdtemp(join(tmpdir(), 'gw-cache-'));
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  gateway = await startGateway({
    configPath: join(dir, 'gateway.json'),
    env: { REDIS_URL: redisUrl(), SECRETS_KEY },
  });
});

afterAll(async () => {
  await gateway?.close();
  await idpA?.close();
  await idpB?.close();
  await deleteNamespace(`mcpgw:{${tag('acme')}}`);
  await deleteNamespace(`mcpgw:{${tag('globex')}}`);
});

function tag(tenantId: string): string {
  return createCacheKeys({ key: createServerKeys({ secretsKey: SECRETS_KEY }).cacheKey }).tenantTag(tenantId);
}

async function token(idp: LocalIssuer, tenant: string, claims: Record<string, unknown>): Promise<string> {
  // A fresh jti makes every token a different string, like a refreshed one.
  const value = await idp.token({
    aud: resource(tenant),
    scope: 'mcp:read',
    jti: randomBytes(8).toString('hex'),
    ...claims,
  });
  tokens.push(value);
  return value;
}

interface Answer {
  status: number;
  result: {
    resources?: Array<{ uri: string }>;
    contents?: Array<{ text?: string }>;
    ttlMs: number;
    cacheScope: string;
  };
}

async function call(
  tenant: string,
  bearer: string,
  method: string,
  params: Record<string, unknown> = {},
): Promise<Answer> {
  const response = await fetch(resource(tenant), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      authorization: `Bearer ${bearer}`,
      ...(typeof params.uri === 'string' ? { 'mcp-name': params.uri } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } }),
  });
  const body = (await response.json()) as { result: Answer['result'] };
  return { status: response.status, result: body.result };
}

/** The per-credential layer's counters (the shared source layer has its own). */
const metrics = (tenant: string) =>
  gateway.app.cache.metrics()[tenant]?.result ?? { hits: 0, misses: 0, errors: 0, bypasses: 0 };
const uris = (answer: Answer) => answer.result.resources?.map((r) => r.uri);

describe('result cache through the gateway (REDIS_URL set)', () => {
  it('serves a second identical request from the cache, and a refreshed token of the same principal hits too', async () => {
    expect(gateway.app.cache.kind).toBe('redis');
    const first = await call(
      'acme',
      await token(idpA, 'acme', { sub: SUBJECT_ALICE, groups: [GROUP] }),
      'resources/list',
    );
    expect(first.status).toBe(200);
    expect(uris(first)).toEqual(['test://docs/pub/handbook', 'test://docs/pub/holidays', 'test://docs/priv/ledger']);
    // The per-source ttlMs from the configuration reaches the wire.
    expect(first.result.ttlMs).toBe(45_000);
    const before = metrics('acme');
    const second = await call('acme', tokens.at(-1)!, 'resources/list');
    expect(uris(second)).toEqual(uris(first));
    expect(second.result.ttlMs).toBeLessThanOrEqual(45_000);
    expect(metrics('acme').hits).toBe(before.hits + 1);
    const refreshed = await call(
      'acme',
      await token(idpA, 'acme', { sub: SUBJECT_ALICE, groups: [GROUP] }),
      'resources/list',
    );
    expect(uris(refreshed)).toEqual(uris(first));
    expect(metrics('acme').hits).toBe(before.hits + 2);
    expect(metrics('acme').misses).toBe(before.misses);

    const read = await call('acme', tokens.at(-1)!, 'resources/read', { uri: 'test://docs/priv/ledger' });
    expect(read.result.contents?.[0]?.text).toBe(SECRET_TEXT);
    expect(read.result.ttlMs).toBe(20_000);
  });

  it('never shows one principal another principal’s cached page, nor one tenant another tenant’s', async () => {
    // Alice's full listing is cached now; Bob (no finance group) asks the same question.
    const bob = await token(idpA, 'acme', { sub: SUBJECT_BOB });
    const before = metrics('acme');
    const page = await call('acme', bob, 'resources/list');
    expect(uris(page)).toEqual(['test://docs/pub/handbook', 'test://docs/pub/holidays']);
    expect(metrics('acme').hits).toBe(before.hits);
    const denied = await call('acme', bob, 'resources/read', { uri: 'test://docs/priv/ledger' });
    expect(denied.status).toBe(200);
    expect(denied.result).toBeUndefined();
    const globex = await call('globex', await token(idpB, 'globex', { sub: SUBJECT_ALICE }), 'resources/read', {
      uri: 'test://docs/pub/handbook',
    });
    expect(globex.result.contents?.[0]?.text).toBe('globex handbook');
    expect(metrics('globex').hits).toBe(0);
  });

  it('bypasses the cache for a request carrying requestState (an MRTR retry)', async () => {
    const alice = await token(idpA, 'acme', { sub: SUBJECT_ALICE, groups: [GROUP] });
    const before = metrics('acme');
    const answer = await call('acme', alice, 'resources/list', { requestState: 'opaque-state' });
    expect(uris(answer)).toHaveLength(3);
    expect(metrics('acme')).toMatchObject({ hits: before.hits, bypasses: before.bypasses + 1 });
  });

  it('answers afresh after invalidateTenant', async () => {
    const alice = await token(idpA, 'acme', { sub: SUBJECT_ALICE, groups: [GROUP] });
    await call('acme', alice, 'resources/list');
    await gateway.app.cache.invalidateTenant('acme');
    const before = metrics('acme');
    await call('acme', alice, 'resources/list');
    expect(metrics('acme').misses).toBeGreaterThan(before.misses);
    expect(metrics('acme').hits).toBe(before.hits);
  });

  it('leaves no token, claim value, URI or content in any Redis key, and no token or claim value in any value', async () => {
    const client = inspector();
    await client.connect();
    let allKeys: string[];
    try {
      allKeys = await client.keys('*');
    } finally {
      client.disconnect();
    }
    const mine = new Map([
      ...(await dumpNamespace(`mcpgw:{${tag('acme')}}`)),
      ...(await dumpNamespace(`mcpgw:{${tag('globex')}}`)),
    ]);
    expect(mine.size).toBeGreaterThan(4);
    const claimValues = [SUBJECT_ALICE, SUBJECT_BOB, GROUP];
    const inKeys = [...claimValues, SECRET_TEXT, 'test://', 'docs', 'acme', 'globex', 'handbook', 'ledger'];
    for (const key of allKeys) {
      for (const token of tokens) expect(key).not.toContain(token.slice(-40));
      for (const value of inKeys) expect(key).not.toContain(value);
    }
    for (const value of mine.values()) {
      for (const token of tokens) {
        for (const part of token.split('.')) expect(value).not.toContain(part);
      }
      for (const claim of claimValues) expect(value).not.toContain(claim);
    }
  });
});
