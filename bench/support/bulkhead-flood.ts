/**
 * The hung tenant's callers in the bulkhead benchmark (bench/bulkhead.ts),
 * run as a child process of their own so that their client-side CPU
 * (creating 200 connections' requests, their timers, reading 503s) is on
 * neither the gateway's event loop nor the loop that times tenant `b`.
 *
 * Messages: `{ start: { port, connections } }` starts the loops and answers
 * `{ started: true }`; `{ stop: true }` ends them and answers
 * `{ statuses: [[status, count], ...] }` (0 counts a request cut by its
 * 2 s deadline).
 */
import { Agent } from 'node:http';
import type * as PostListModule from './post-resources-list.js';

export interface FloodSpec {
  port: number;
  connections: number;
  body: string;
}

export type FloodMessage = { started: true } | { statuses: [number, number][] };

const { postResourcesList } = (await import(
  new URL('./post-resources-list.ts', import.meta.url).href
)) as typeof PostListModule;

/** A caller gives up on a hung request after this long, as a client with a deadline does. */
const GIVE_UP_MS = 2000;
/** Retry-After for a tenant at its cap (1 s): a well-behaved client waits that long. */
const RETRY_AFTER_MS = 1000;

let running = false;
let loops: Promise<void>[] = [];
const statuses = new Map<number, number>();
let agent: Agent | undefined;

function start({ port, connections, body }: FloodSpec): void {
  running = true;
  statuses.clear();
  agent = new Agent({ keepAlive: true, maxSockets: connections });
  const flooding = agent;
  loops = Array.from({ length: connections }, async () => {
    while (running) {
      const status = await postResourcesList({
        port,
        path: '/t/a/mcp',
        body,
        agent: flooding,
        timeoutMs: GIVE_UP_MS,
      }).then(
        (answer) => answer.status,
        () => 0,
      );
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      // Honouring Retry-After keeps the load the hung backend's, not a retry storm (which the rate limits are for).
      if (status === 503 && running) await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS));
    }
  });
}

const send = (message: FloodMessage) => process.send?.(message);

process.on('message', (message: { start?: FloodSpec; stop?: true }) => {
  if (message.start !== undefined) {
    start(message.start);
    send({ started: true });
  } else if (message.stop === true) {
    running = false;
    void Promise.all(loops).then(() => {
      agent?.destroy();
      send({ statuses: [...statuses] });
    });
  }
});
process.on('disconnect', () => process.exit(0));
