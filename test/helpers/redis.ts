/**
 * Real Redis for tests and benchmarks (a missing one fails loudly, never
 * skips: a test that does not run proves nothing).
 *
 * The shared server is `REDIS_URL`, or redis://127.0.0.1:6379. Each test run
 * uses its own key namespace (`testNamespace`) and removes its keys after
 * (`deleteNamespace`). Tests that stop Redis on purpose start their own
 * server as a child process (`startRedisServer`) and only ever kill that pid.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
// By package name, not './free-port.js': benchmarks load this file on Node's type stripping.
import { freePort } from '@mcpgw/test-helpers/free-port';
import { within } from '@mcpgw/test-helpers/within';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const START_REDIS_HINT =
  'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log';
const ANSWER_TIMEOUT_MS = 3000;

/** REDIS_URL or the loopback default. */
export function redisUrl(): string {
  const fromEnv = process.env.REDIS_URL;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : DEFAULT_REDIS_URL;
}

/** A client for inspecting the test server; the caller quits it. Fails fast rather than queueing. */
export function inspector(url = redisUrl()): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: ANSWER_TIMEOUT_MS, lazyConnect: true });
  client.on('error', () => undefined);
  return client;
}

/** Resolves when the server answers PING within 3 s; otherwise throws an Error that says how to start it. */
export async function requireRedis(url = redisUrl()): Promise<void> {
  const client = inspector(url);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('no answer')), ANSWER_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Redis did not answer at ${redactUrl(url)} within ${ANSWER_TIMEOUT_MS / 1000} s (${reason}). ` +
        `Start it with: ${START_REDIS_HINT}   (or set REDIS_URL to a server that runs)`,
    );
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/** A key namespace no other run uses, e.g. `mcpgw-test-results-1a2b3c4d`. */
export function testNamespace(label: string): string {
  return `mcpgw-test-${label}-${randomBytes(4).toString('hex')}`;
}

/** Every key under `namespace` with its value (strings only: the cache stores nothing else). */
export async function dumpNamespace(namespace: string, url = redisUrl()): Promise<Map<string, string>> {
  const client = inspector(url);
  await client.connect();
  try {
    const keys = await scanKeys(client, `${namespace}:*`);
    const values = keys.length === 0 ? [] : await client.mget(...keys);
    return new Map(keys.map((key, i) => [key, values[i] ?? '']));
  } finally {
    client.disconnect();
  }
}

/** Removes every key under `namespace`. */
export async function deleteNamespace(namespace: string, url = redisUrl()): Promise<void> {
  const client = inspector(url);
  await client.connect();
  try {
    const keys = await scanKeys(client, `${namespace}:*`);
    for (let i = 0; i < keys.length; i += 500) await client.del(...keys.slice(i, i + 500));
  } finally {
    client.disconnect();
  }
}

async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  // Bounded: SCAN visits every key once per full pass; 100,000 rounds is far beyond any test.
  for (let round = 0; round < 100_000; round += 1) {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
    if (cursor === '0') return keys;
  }
  throw new Error('SCAN did not finish');
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable REDIS_URL)';
  }
}

/** A redis-server child process this test owns. */
export interface OwnRedisServer {
  readonly url: string;
  readonly port: number;
  /** SIGKILL: Redis vanishes (connections reset). */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: `--save ''`). */
  restart(): Promise<void>;
  /** SIGSTOP / SIGCONT: Redis stops answering but keeps connections open (a slow Redis). */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

/** Starts `redis-server` on a free loopback port, without persistence. */
export async function startRedisServer(): Promise<OwnRedisServer> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async () => {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
      { stdio: 'ignore' },
    );
    started.once('error', () => undefined);
    child = started;
    await within(
      10_000,
      async () => {
        if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode}`);
        await requireRedis(url);
      },
      `redis-server answering on port ${port} (is redis-server on PATH?)`,
    );
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGCONT');
    running.kill('SIGKILL');
    await exited;
  };

  await start();
  return {
    url,
    port,
    kill: stop,
    restart: start,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    close: stop,
  };
}

/** A three-master Redis Cluster of child processes this test owns. */
export interface OwnRedisCluster {
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3` */
  readonly url: string;
  readonly ports: readonly number[];
  close(): Promise<void>;
}

/** Starts three `redis-server --cluster-enabled yes` on free ports and joins them (`redis-cli --cluster create`). */
export async function startRedisCluster(): Promise<OwnRedisCluster> {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { execFile } = await import('node:child_process');
  const ports = [await freePort(), await freePort(), await freePort()];
  const dir = await mkdtemp(join(tmpdir(), 'redis-cluster-'));
  const children: ChildProcess[] = [];
  const close = async () => {
    await Promise.all(
      children.map((child) => {
        if (child.exitCode !== null || child.signalCode !== null) return undefined;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        return exited;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--dir',
          dir,
          '--loglevel',
          'warning',
        ],
        { stdio: 'ignore' },
      );
      child.once('error', () => undefined);
      children.push(child);
    }
    for (const port of ports) {
      await within(10_000, () => requireRedis(`redis://127.0.0.1:${port}`), `the cluster node on port ${port}`);
    }
    await new Promise<void>((resolve, reject) =>
      execFile(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((port) => `127.0.0.1:${port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { timeout: 20_000 },
        (error, _stdout, stderr) =>
          error ? reject(new Error(`redis-cli --cluster create failed: ${stderr}`)) : resolve(),
      ),
    );
    // Every node must agree the cluster is up before clients route by slot.
    const client = inspector(`redis://127.0.0.1:${ports[0]}`);
    await client.connect();
    try {
      await within(
        20_000,
        async () => {
          const info = String(await client.cluster('INFO'));
          if (!info.includes('cluster_state:ok')) throw new Error(info.split('\n')[0]);
        },
        'the Redis Cluster in cluster_state:ok',
      );
    } finally {
      client.disconnect();
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`, ports, close };
}
