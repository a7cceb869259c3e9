/**
 * The gateway as the container image runs it: `node apps/gateway/dist/main.js`
 * in a process of its own, configured by its environment only, its JSON log
 * lines on standard output (a pipe this process drains, as a container
 * runtime reads one), bound to `host` on a port chosen first, so its
 * PUBLIC_URL can name it. Its CPU time and memory are read from /proc
 * (process-usage.ts): nothing of the bench runs inside it.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type * as ProcessUsageModule from './process-usage.js';

const { cpuMicros, rssBytes, pinToCore } = (await import(
  new URL('./process-usage.ts', import.meta.url).href
)) as typeof ProcessUsageModule;

const MAIN = new URL('../../apps/gateway/dist/main.js', import.meta.url);
const START_TIMEOUT_MS = 30_000;

export interface DeployedGatewayOptions {
  /** The Node binary to run it with. */
  node: string;
  /** The interface to bind and to reach it on (a non-loopback address, as in a deployment). */
  host: string;
  /** The gateway's environment (DATABASE_URL, REDIS_URL, GATEWAY_CONFIG, ...); HOST, PORT and PUBLIC_URL are set here. */
  env: Record<string, string>;
  /** Flags for Node before the entry, e.g. `--cpu-prof` or `--import` of bench/support/mechanism-switches.mjs. */
  execArgv?: string[];
  /** Extra variables of the process's environment that the gateway does not read (e.g. MECHANISMS_OFF for the switches). */
  processEnv?: Record<string, string>;
  /** The CPU its every thread is pinned to once it listens. */
  core?: number;
  /** Gets its standard output (access lines, and V8's traces when asked for); otherwise drained unread. */
  onStdout?: (chunk: Buffer) => void;
}

export interface DeployedGateway {
  readonly process: ChildProcess;
  /** `http://host:port`, also its PUBLIC_URL. */
  readonly url: string;
  cpuMicros(): Promise<number>;
  rss(): Promise<number>;
  /** SIGTERM, as an orchestrator stops it, and waits for the exit (a `--cpu-prof` profile is written then). */
  stop(): Promise<void>;
}

/** A port free on `host` just now. */
function freePortOn(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export async function startDeployedGateway(options: DeployedGatewayOptions): Promise<DeployedGateway> {
  const port = await freePortOn(options.host);
  const url = `http://${options.host}:${port}`;
  const child = spawn(options.node, [...(options.execArgv ?? []), MAIN.pathname], {
    // Only what the gateway is given, plus PATH: no variable of the bench's own shell reaches it.
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      ...options.processEnv,
      ...options.env,
      HOST: options.host,
      PORT: String(port),
      PUBLIC_URL: url,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (options.onStdout === undefined) child.stdout.resume();
  else child.stdout.on('data', options.onStdout);
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode}) before listening: ${errors}`);
    const answer = await fetch(`${url}/healthz`).catch(() => undefined);
    if (answer?.ok === true) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the gateway did not answer /healthz within ${START_TIMEOUT_MS} ms: ${errors}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pid = child.pid!;
  if (options.core !== undefined) await pinToCore(pid, options.core);
  return {
    process: child,
    url,
    cpuMicros: () => cpuMicros(pid),
    rss: () => rssBytes(pid),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
