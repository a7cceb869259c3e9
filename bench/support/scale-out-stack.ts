/**
 * The deployed stack of the scale-out benchmarks (bench/scale-out-inputs.ts,
 * bench/scale-out-replicas.ts), with every counter they read their own: a
 * Postgres server of the run's own (initdb on a spare port, with
 * `pg_stat_statements` loaded, so its statement counts are this run's only),
 * a redis-server of its own (so `INFO commandstats` counts only this run),
 * gateway replicas started as `npm start` runs them (`apps/gateway/dist/main.js`,
 * a process each, optionally pinned to cores with `taskset`) on a
 * non-loopback address of this machine, and readers of each process's CPU
 * time from /proc.
 */
import { execFile, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type * as NonLoopbackModule from './non-loopback-address.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../../apps/gateway/dist/main.js', import.meta.url));

/** Clock ticks per second of /proc/<pid>/stat (`getconf CLK_TCK`). */
const CLOCK_TICKS = Number((await run('getconf', ['CLK_TCK'])).stdout.trim()) || 100;

/** User plus system CPU time of a process (all its threads), in µs. */
export async function processCpuMicros(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / CLOCK_TICKS;
}

/** CPU time of a process and every process whose parent it is (Postgres: the postmaster and its backends). */
export async function processTreeCpuMicros(rootPid: number): Promise<number> {
  let total = 0;
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(name) !== rootPid && Number(fields[1]) !== rootPid) continue;
    // Exited children's time is in the parent's cutime/cstime (fields 13, 14).
    const own = Number(fields[11]) + Number(fields[12]);
    const reaped = Number(name) === rootPid ? Number(fields[13]) + Number(fields[14]) : 0;
    total += ((own + reaped) * 1_000_000) / CLOCK_TICKS;
  }
  return total;
}

/** The first IPv4 address of this machine that is not loopback: the gateway's HOST and the clients' source. */
export const { nonLoopbackAddress } = (await import(
  new URL('./non-loopback-address.ts', import.meta.url).href
)) as typeof NonLoopbackModule;

export interface PrivatePostgres {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:{port}/{database} */
  url(database: string): string;
  /** The postmaster's process id (its backends are its children). */
  readonly pid: number;
  close(): Promise<void>;
}

function postgresBin(): string {
  if (process.env.PG_BIN !== undefined && process.env.PG_BIN !== '') return process.env.PG_BIN;
  const versions = readdirSync('/usr/lib/postgresql')
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  if (versions[0] === undefined) throw new Error('no Postgres binaries under /usr/lib/postgresql: set PG_BIN');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

/**
 * A Postgres server of the run's own: trust authentication on 127.0.0.1,
 * fsync off, `pg_stat_statements` preloaded and tracking nested and utility
 * statements (NOTIFY, LISTEN), `taskset` to `cpus` when given.
 */
export async function startPrivatePostgres(cpus?: string): Promise<PrivatePostgres> {
  const bin = postgresBin();
  const folder = await mkdtemp(join(tmpdir(), 'bench-scale-out-pg-'));
  // initdb and pg_ctl refuse to run as root: as root, run them as the postgres account.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    await chown(folder, uid, gid);
  }
  const tool = (name: string, args: string[]) => {
    const command = [...(cpus === undefined ? [] : ['taskset', '-c', cpus]), join(bin, name), ...args];
    return asRoot ? run('runuser', ['-u', 'postgres', '--', ...command]) : run(command[0]!, command.slice(1));
  };
  const data = join(folder, 'data');
  await tool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    `-k ${folder}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c max_connections=200',
    '-c shared_preload_libraries=pg_stat_statements',
    '-c pg_stat_statements.track=all',
    '-c pg_stat_statements.track_utility=on',
  ].join(' ');
  await tool('pg_ctl', ['-D', data, '-o', options, '-l', join(folder, 'log'), '-w', 'start']);
  const pid = Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const admin = new pg.Client({ connectionString: url('postgres') });
  await admin.connect();
  await admin.query('CREATE EXTENSION pg_stat_statements');
  await admin.end();
  return {
    port,
    url,
    pid,
    async close() {
      await tool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    },
  };
}

/** One statement's counters in `pg_stat_statements`. */
export interface StatementCount {
  database: string;
  query: string;
  calls: number;
  totalMs: number;
}

/** Every statement's counters now, keyed by database and query id. */
export async function statementCounts(client: pg.Client): Promise<Map<string, StatementCount>> {
  const { rows } = await client.query<{
    id: string;
    database: string;
    query: string;
    calls: string;
    total: number;
  }>(
    `SELECT s.dbid::text || ':' || s.queryid::text || ':' || s.toplevel::text AS id, d.datname AS database,
            s.query, s.calls::text AS calls, s.total_exec_time AS total
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid`,
  );
  return new Map(
    rows.map((row) => [
      row.id,
      { database: row.database, query: row.query, calls: Number(row.calls), totalMs: row.total },
    ]),
  );
}

/** What ran between two snapshots of `statementCounts`, by database; the bench's own reads left out. */
export function statementDelta(
  before: Map<string, StatementCount>,
  after: Map<string, StatementCount>,
): StatementCount[] {
  const delta: StatementCount[] = [];
  for (const [id, now] of after) {
    const then = before.get(id);
    const calls = now.calls - (then?.calls ?? 0);
    if (calls <= 0 || now.query.includes('pg_stat_statements')) continue;
    delta.push({ ...now, calls, totalMs: now.totalMs - (then?.totalMs ?? 0) });
  }
  return delta.sort((a, b) => b.calls - a.calls);
}

/** Redis's counters: calls per command, bytes in and out, commands processed. */
export interface RedisCounters {
  calls: Map<string, number>;
  netInput: number;
  netOutput: number;
}

/** Reads `INFO commandstats` and `INFO stats` over `send` (the `info` command's own calls are not subtracted here). */
export async function redisCounters(info: (section: string) => Promise<string>): Promise<RedisCounters> {
  const calls = new Map<string, number>();
  for (const line of (await info('commandstats')).split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match !== null) calls.set(match[1]!, Number(match[2]));
  }
  const stats = await info('stats');
  const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(stats)?.[1] ?? 0);
  return { calls, netInput: field('total_net_input_bytes'), netOutput: field('total_net_output_bytes') };
}

/** Commands (other than `info`, the bench's own) and bytes between two readings. */
export function redisDelta(
  before: RedisCounters,
  after: RedisCounters,
): { calls: Map<string, number>; total: number; netInput: number; netOutput: number } {
  const calls = new Map<string, number>();
  let total = 0;
  for (const [command, count] of after.calls) {
    if (command === 'info') continue;
    const delta = count - (before.calls.get(command) ?? 0);
    if (delta > 0) {
      calls.set(command, delta);
      total += delta;
    }
  }
  return { calls, total, netInput: after.netInput - before.netInput, netOutput: after.netOutput - before.netOutput };
}

export interface GatewayProcess {
  readonly pid: number;
  readonly port: number;
  /** `http://{host}:{port}` */
  readonly origin: string;
  readonly child: ChildProcess;
  cpuMicros(): Promise<number>;
  /** Moves the process (every thread) to `cpus` (a `taskset` list, e.g. `1` or `0,1`). */
  pin(cpus: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts `apps/gateway/dist/main.js` with `env` on `host` (a free port) and
 * waits for `/readyz`. stdout (the access log, at LOG_LEVEL) goes to
 * /dev/null, as a log shipper would take it; stderr is inherited.
 */
export async function startGatewayProcess(
  env: Record<string, string>,
  options: { host: string; port?: number; node?: string; cpus?: string },
): Promise<GatewayProcess> {
  const port = options.port ?? (await freePort());
  const node = options.node ?? process.execPath;
  const child = spawn(
    options.cpus === undefined ? node : 'taskset',
    options.cpus === undefined ? [MAIN] : ['-c', options.cpus, node, MAIN],
    {
      env: { PATH: process.env.PATH ?? '', HOST: options.host, PORT: String(port), ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const origin = `http://${options.host}:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode} before it was ready`);
    const ready = await fetch(`${origin}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`gateway on ${origin} not ready within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // taskset exec()s node, so the child's pid is the gateway's.
  const pid = child.pid!;
  return {
    pid,
    port,
    origin,
    child,
    cpuMicros: () => processCpuMicros(pid),
    async pin(cpus) {
      await run('taskset', ['-a', '-p', '-c', cpus, String(pid)]);
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** One HTTP request with a `Host` header of its own choosing (fetch cannot set one); the body as text. */
export function httpCall(
  origin: string,
  options: { method: string; path: string; host: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(options.path, origin);
    const req = httpRequest(
      url,
      {
        method: options.method,
        agent: false,
        headers: {
          host: options.host,
          ...(options.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(options.body)) }),
          ...options.headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The headers of a 2026-07-28 request for `method` (Mcp-Name for a read, in the base64 form). */
export function mcpHeaders(method: string, host: string, bearer: string, uri?: string): Record<string, string> {
  return {
    host,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    authorization: `Bearer ${bearer}`,
    ...(uri === undefined ? {} : { 'mcp-name': `=?base64?${Buffer.from(uri).toString('base64')}?=` }),
  };
}

/** The JSON-RPC body of a 2026-07-28 request. */
export function mcpBody(method: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
}
