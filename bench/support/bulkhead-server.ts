/**
 * The gateway of the bulkhead benchmark (bench/bulkhead.ts), run as a child
 * process so that only the gateway's own work is on its event loop, as in a
 * deployment: the parent forks it with an IPC channel and sends
 * `{ start: { configPath, dataDir, logLevel } }`; it answers `{ port }`, then
 * `{ stats }` (its `process.cpuUsage()` and the refusal counters) when asked,
 * and closes on `{ stop: true }` (so that a `--cpu-prof` profile is written).
 *
 * It registers the `hung` source type: the static type, except that its
 * listings never answer until the request is cancelled, as a dead bucket or a
 * Postgres at its statement timeout behaves.
 */
import type { Source, SourceFactory } from '@mcpgw/core';
import type { FastifyInstance } from 'fastify';
import { createSourceRegistry } from '@mcpgw/gateway/testing';
import type * as BuiltGatewayModule from './built-gateway.js';
import type * as IpcServerModule from './ipc-server.js';

// Node 22 strips the types of a .ts file it is pointed at; tsc checks the module through the type import.
const { answerParent } = (await import(new URL('./ipc-server.ts', import.meta.url).href)) as typeof IpcServerModule;

export interface BulkheadServerSpec {
  configPath: string;
  dataDir: string;
  logLevel: string;
}

export interface BulkheadServerStats {
  cpuMicros: number;
  /** 503s for a tenant at its in-flight cap so far. */
  refused: number;
}

export type BulkheadServerMessage = { port: number } | { stats: BulkheadServerStats };

const registry = createSourceRegistry();
const staticFactory = registry.get('static') as SourceFactory;
const hungFactory: SourceFactory = {
  type: 'hung',
  optionsSchema: staticFactory.optionsSchema,
  model: staticFactory.model,
  async create(options, context): Promise<Source> {
    const source = await staticFactory.create(options, context);
    return new Proxy(source, {
      get: (target, key) =>
        key === 'listResources'
          ? (_page: unknown, signal?: AbortSignal) =>
              new Promise((_resolve, reject) =>
                signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
              )
          : Reflect.get(target, key),
    });
  },
};
const withHung = new Map([...registry, [hungFactory.type, hungFactory]]);

let app: FastifyInstance | undefined;
/** Closes what was started (the gateway's control plane after the app). */
let closeStarted: (() => Promise<void>) | undefined;

async function start(spec: BulkheadServerSpec): Promise<number> {
  const { startBuiltGateway } = (await import(
    new URL('./built-gateway.ts', import.meta.url).href
  )) as typeof BuiltGatewayModule;
  const started = await startBuiltGateway(
    { GATEWAY_CONFIG: spec.configPath, DATA_DIR: spec.dataDir, LOG_LEVEL: spec.logLevel },
    { registry: withHung },
  );
  app = started.app;
  closeStarted = started.close;
  return started.port;
}

answerParent<BulkheadServerSpec, BulkheadServerStats>({
  start,
  stats() {
    const cpu = process.cpuUsage();
    return { cpuMicros: cpu.user + cpu.system, refused: app?.limits.inFlight.refused ?? 0 };
  },
  close: () => (closeStarted ?? (() => app?.close() ?? Promise.resolve()))(),
});
