/**
 * A server of bench/support/hot-path-server.ts in a child process of its
 * own, driven over IPC: started with a `ServerSpec`, asked for its own CPU
 * time, RSS and cache counters, stopped. Benchmarks charge a server only
 * what its process used, never the load generator's work.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { ServerMessage, ServerSpec } from './hot-path-server.js';

export type ServerStats = Extract<ServerMessage, { stats: unknown }>['stats'];

export interface ServerChild {
  process: ChildProcess;
  port: number;
  stats(): Promise<ServerStats>;
  stop(): Promise<void>;
}

export interface ServerChildOptions {
  /** The server module to run, e.g. another build's copy; default this repository's. */
  module?: string | URL;
  /** Extra Node flags, e.g. `--cpu-prof`. */
  execArgv?: string[];
  /** The Node binary to run it with; default this process's. */
  execPath?: string;
  /** Extra variables of the process's environment (not the gateway's configuration), e.g. glibc's `MALLOC_*`. */
  processEnv?: Record<string, string>;
  /** `pipe` to read what the process prints (e.g. V8's `--trace-gc-nvp` lines); default ignored. */
  stdout?: 'ignore' | 'pipe';
}

export async function startServerChild(spec: ServerSpec, options: ServerChildOptions = {}): Promise<ServerChild> {
  const child = fork(options.module ?? new URL('./hot-path-server.ts', import.meta.url), [], {
    stdio: ['ignore', options.stdout ?? 'ignore', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...(options.execArgv ?? [])],
    ...(options.execPath === undefined ? {} : { execPath: options.execPath }),
    env: { ...process.env, ...options.processEnv },
  });
  let pending: { resolve(message: ServerMessage): void; reject(error: Error): void } | undefined;
  child.on('message', (message) => pending?.resolve(message as ServerMessage));
  child.on('exit', (code) => pending?.reject(new Error(`${spec.kind} server exited (${code})`)));
  const next = () =>
    new Promise<ServerMessage>((resolve, reject) => {
      pending = { resolve, reject };
    });
  const started = next();
  child.send({ start: spec });
  const first = await started;
  if (!('port' in first)) throw new Error('expected a port');
  return {
    process: child,
    port: first.port,
    async stats() {
      const answer = next();
      child.send({ stats: true });
      const message = await answer;
      if (!('stats' in message)) throw new Error('expected stats');
      return message.stats;
    },
    /** Asks the server to close and waits for its process to exit (a `--cpu-prof` profile is written then). */
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      pending = undefined;
      child.send({ stop: true });
      await exited;
    },
  };
}
