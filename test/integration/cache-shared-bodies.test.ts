import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCacheKeys } from '@mcpgw/cache';
import type { TenantCacheMetrics } from '@mcpgw/cache';
import type { StartedGateway } from '../helpers/gateway.js';
import { startGateway } from '../helpers/gateway.js';
import type { LocalIssuer } from '../helpers/local-issuer.js';
import { startLocalIssuer } from '../helpers/local-issuer.js';
import { deleteNamespace, redisUrl, requireRedis } from '../helpers/redis.js';
import { createServerKeys } from '@mcpgw/core';

// Many principals, one role: principals with the same effective
// grants share one stored result body, so a principal's first listing is a
// hit when another of the same role listed within the ttl; what is bound to
// a principal (its cursor) is sealed for that principal on the way out; and
// principals with other grants never get that body. Real tokens, real
// grants, both stores (in-process and Redis).

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const SECRETS_KEY = randomBytes(24).toString('base64url');
const TENANT = 'acme';
// 150 resources: the first page (100) ends with a cursor.
const DOCS = Array.from({ length: 150 }, (_, i) => ({
  uri: `test://docs/${String(i).padStart(3, '0')}`,
  name: `doc-${i}`,
  text: `doc ${i}`,
}));

interface ListBody {
  result?: { resources: Array<{ uri: string }>; nextCursor?: string; ttlMs: number };
  error?: { code: number; message: string };
}

let idp: LocalIssuer;
let configPath: string;

beforeAll(async () => {
  await requireRedis();
  idp = await startLocalIssuer({ path: '/idp-shared' });
  const config = {
    tenants: [
      {
        id: TENANT,
        auth: { issuers: [{ issuer: idp.issuer, jwksUri: idp.jwksUri, groupsClaim: 'groups' }] },
        grants: [
          { name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] },
          { name: 'auditors', match: { groups: ['audit'] }, allow: [{ source: 'ledger' }] },
        ],
        sources: [
          { id: 'docs', type: 'static', ttlMs: { list: 60_000, read: 60_000 }, resources: DOCS },
          {
            id: 'ledger',
            type: 'static',
            ttlMs: { list: 60_000, read: 60_000 },
            resources: [{ uri: 'test://ledger/q3', name: 'q3', text: 'audited numbers' }],
          },
        ],
      },
    ],
  };
  const dir = await mkdtemp(join(tmpdir(), 'gw-shared-'));
  configPath = join(dir, 'gateway.json');
  await writeFile(configPath, JSON.stringify(config));
});

afterAll(async () => {
  await idp?.close();
  const keys = createCacheKeys({ key: createServerKeys({ secretsKey: SECRETS_KEY }).cacheKey });
  await deleteNamespace(`mcpgw:{${keys.tenantTag(TENANT)}}`);
});

describe.each(['memory', 'redis'] as const)('result bodies shared by a role (%s store)', (kind) => {
  let gateway: StartedGateway;
  beforeAll(async () => {
    gateway = await startGateway({
      configPath,
      env: { SECRETS_KEY, ...(kind === 'redis' ? { REDIS_URL: redisUrl() } : {}) },
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const resource = () => `${gateway.baseUrl}/t/${TENANT}/mcp`;
  const token = (subject: string, claims: Record<string, unknown> = {}) =>
    idp.token({ aud: resource(), sub: `${kind}-${subject}`, scope: 'mcp:read', ...claims });
  const list = async (bearer: string, cursor?: string): Promise<ListBody> => {
    const response = await fetch(resource(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${bearer}`,
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'resources/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/list',
        params: { ...(cursor === undefined ? {} : { cursor }), _meta: META },
      }),
    });
    return (await response.json()) as ListBody;
  };
  const counters = () => (gateway.app.cache.metrics() as Record<string, TenantCacheMetrics>)[TENANT]!.result;

  it("answers a principal's first listing from the body another principal of the same role stored", async () => {
    const alice = await token('alice');
    const bob = await token('bob');
    const first = await list(alice);
    const before = counters();
    const shared = await list(bob);
    expect(counters().hits).toBe(before.hits + 1);
    expect(counters().misses).toBe(before.misses);
    expect(shared.result?.resources).toEqual(first.result?.resources);
    expect(shared.result?.resources).toHaveLength(100);
    expect(shared.result?.ttlMs).toBeLessThanOrEqual(60_000);
  });

  it('seals each principal its own cursor: it continues their listing, and no one else can use it', async () => {
    const carol = await token('carol');
    const dave = await token('dave');
    const carolPage = await list(carol);
    const davePage = await list(dave);
    const carolCursor = carolPage.result!.nextCursor!;
    const daveCursor = davePage.result!.nextCursor!;
    expect(daveCursor).toBeDefined();
    expect(daveCursor).not.toBe(carolCursor);
    // Dave's cursor is his: page 2 follows; Carol's cursor is refused for Dave, and the other way round.
    expect((await list(dave, daveCursor)).result?.resources).toHaveLength(50);
    expect((await list(dave, carolCursor)).error?.code).toBe(-32602);
    expect((await list(carol, daveCursor)).error?.code).toBe(-32602);
    // A second listing by Dave is his own entry, with a cursor that is still his.
    const again = await list(dave);
    expect(again.result?.nextCursor).not.toBe(carolCursor);
    expect((await list(dave, again.result!.nextCursor)).result?.resources).toHaveLength(50);
  });

  it('never gives a principal with other grants the body of another role', async () => {
    const reader = await token('erin');
    await list(reader);
    const auditor = await token('frank', { scope: 'other', groups: ['audit'] });
    const before = counters();
    const page = await list(auditor);
    // Another view: fetched for the auditor, not answered from the readers' body.
    expect(counters().misses).toBe(before.misses + 1);
    expect(page.result?.resources.map((r) => r.uri)).toEqual(['test://ledger/q3']);
    expect(page.result?.nextCursor).toBeUndefined();
    // And the readers still see only their own.
    const readerPage = await list(await token('grace'));
    expect(readerPage.result?.resources.map((r) => r.uri)).not.toContain('test://ledger/q3');
  });
});
