/**
 * Forks one bench server (./hot-path-server.ts) as a child process and talks
 * to it over IPC: its port, its own CPU time and RSS, and stopping it. A
 * server in its own process has its own event loop (as in a deployment), and
 * its CPU time can be read apart from the load generator's.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { ServerMessage, ServerSpec } from './hot-path-server.js';

export type ServerStats = Extract<ServerMessage, { stats: unknown }>['stats'];

export interface ServerChild {
  readonly process: ChildProcess;
  readonly port: number;
  stats(): Promise<ServerStats>;
  /** Asks the server to close and waits for its process to exit (a `--cpu-prof` profile is written then). */
  stop(): Promise<void>;
}

/** `execArgv`: Node flags for the child only, e.g. `['--cpu-prof', '--cpu-prof-dir', dir]`. */
export async function startServerChild(spec: ServerSpec, execArgv: readonly string[] = []): Promise<ServerChild> {
  const child = fork(new URL('./hot-path-server.ts', import.meta.url), [], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...execArgv],
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
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      pending = undefined;
      child.send({ stop: true });
      await exited;
    },
  };
}
