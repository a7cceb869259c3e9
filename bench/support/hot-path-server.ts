/**
 * One server of the hot-path benchmark (bench/hot-path.ts; also the gateway
 * of bench/s3-read.ts and bench/tenant-registry.ts), run as a child process
 * so its CPU time can be read on its own: the parent forks it with
 * an IPC channel, sends `{ start: ServerSpec }`, gets `{ port }` back, and
 * then asks `{ stats: true }` whenever it wants `process.cpuUsage()`, the
 * RSS and (for the gateway) its cache counters.
 *
 * Kinds:
 *   raw          a plain Fastify POST route answering fixed bytes (the ceiling)
 *   handwritten  a minimal JSON-RPC handler building the page per request, no auth
 *   sdk          the official SDK's `createMcpHandler` behind a Fastify route
 *   gateway      the gateway from its build (apps/gateway/dist), logging at info
 */
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type * as BuiltGatewayModule from './built-gateway.js';
import type * as IpcServerModule from './ipc-server.js';

// Node 22 strips the types of a .ts file it is pointed at; tsc checks the module through the type import.
const { answerParent } = (await import(new URL('./ipc-server.ts', import.meta.url).href)) as typeof IpcServerModule;

export interface Descriptor {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

export type ServerSpec = (
  | { kind: 'raw'; bytes: string }
  | { kind: 'handwritten'; resources: Descriptor[]; pageSize: number }
  | { kind: 'sdk'; resources: Descriptor[]; pageSize: number }
  | {
      kind: 'gateway';
      env: Record<string, string>;
      /**
       * `static-map` (bench/tenant-registry.ts's baseline): the MCP route finds
       * each tenant in a Map of the runtimes built at start, with no lease,
       * as the gateway did before its tenant registry.
       */
      tenantLookup?: 'registry' | 'static-map';
    }
) & {
  /** The interface a baseline listens on; default loopback. */
  host?: string;
  /**
   * Samples this process's memory this often (ms) and reports the highest
   * values since the previous stats (`peak`); default off, as it costs CPU.
   */
  sampleMemoryEveryMs?: number;
  /**
   * Runs a full garbage collection this often (ms; needs Node's `--expose-gc`)
   * and reports the highest figures right after one since the previous stats
   * (`live`): what is held, not garbage awaiting collection. Default off.
   */
  sampleLiveEveryMs?: number;
};

/** `process.memoryUsage()`'s figures, in bytes. */
export interface MemoryFigures {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export type ServerMessage =
  | { port: number }
  | {
      stats: {
        cpuMicros: number;
        rss: number;
        heapUsed: number;
        memory: MemoryFigures;
        /** With `sampleMemoryEveryMs`: the highest of each figure since the previous stats. */
        peak?: MemoryFigures;
        /** With `sampleLiveEveryMs`: the highest of each figure right after a full collection since the previous stats. */
        live?: MemoryFigures;
        cache?: Record<string, unknown>;
      };
    };

let app: FastifyInstance | undefined;
/** Closes what was started (the gateway's control plane after the app). */
let closeStarted: (() => Promise<void>) | undefined;
let gatewayCache: { metrics(): Record<string, unknown> } | undefined;

let peak: MemoryFigures | undefined;
let live: MemoryFigures | undefined;
const highest = (a: MemoryFigures | undefined, b: MemoryFigures): MemoryFigures =>
  a === undefined
    ? b
    : {
        rss: Math.max(a.rss, b.rss),
        heapUsed: Math.max(a.heapUsed, b.heapUsed),
        external: Math.max(a.external, b.external),
        arrayBuffers: Math.max(a.arrayBuffers, b.arrayBuffers),
      };
function sampleLive(): void {
  (globalThis as { gc?: () => void }).gc?.();
  live = highest(live, memoryFigures());
}
const memoryFigures = (): MemoryFigures => {
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { rss, heapUsed, external, arrayBuffers };
};
function samplePeak(): void {
  peak = highest(peak, memoryFigures());
}

async function start(spec: ServerSpec): Promise<number> {
  if (spec.sampleMemoryEveryMs !== undefined) setInterval(samplePeak, spec.sampleMemoryEveryMs).unref();
  if (spec.sampleLiveEveryMs !== undefined) setInterval(sampleLive, spec.sampleLiveEveryMs).unref();
  switch (spec.kind) {
    case 'raw': {
      const bytes = Buffer.from(spec.bytes, 'utf8');
      app = Fastify();
      app.post('/mcp', async (_request, reply) => reply.type('application/json').send(bytes));
      break;
    }
    case 'handwritten': {
      const { resources, pageSize } = spec;
      app = Fastify();
      app.post('/mcp', async (request, reply) => {
        const body = request.body as { jsonrpc?: unknown; id?: unknown; method?: unknown };
        if (body?.jsonrpc !== '2.0' || body.method !== 'resources/list') {
          return reply
            .code(400)
            .send({ jsonrpc: '2.0', id: body?.id ?? null, error: { code: -32600, message: 'bad request' } });
        }
        return reply.type('application/json').send(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: {
              resultType: 'complete',
              resources: resources.slice(0, pageSize),
              nextCursor: String(pageSize),
              ttlMs: 60_000,
              cacheScope: 'private',
            },
          }),
        );
      });
      break;
    }
    case 'sdk': {
      const { resources, pageSize } = spec;
      const { Server, createMcpHandler } = await import('@modelcontextprotocol/server');
      const handler = createMcpHandler(
        () => {
          const server = new Server({ name: 'bench-sdk', version: '1.0.0' }, { capabilities: { resources: {} } });
          server.setRequestHandler('resources/list', async () => ({
            resources: resources.slice(0, pageSize),
            nextCursor: String(pageSize),
          }));
          return server;
        },
        { legacy: 'reject', responseMode: 'json' },
      );
      app = Fastify();
      app.post('/mcp', async (request, reply) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(request.headers)) {
          if (typeof value === 'string') headers.set(name, value);
        }
        const web = new Request(`http://${request.headers.host ?? '127.0.0.1'}${request.url}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(request.body),
        });
        const response = await handler.fetch(web, { parsedBody: request.body });
        reply.code(response.status);
        response.headers.forEach((value, name) => reply.header(name, value));
        return reply.send(Buffer.from(await response.arrayBuffer()));
      });
      break;
    }
    case 'gateway': {
      const { startBuiltGateway } = (await import(
        new URL('./built-gateway.ts', import.meta.url).href
      )) as typeof BuiltGatewayModule;
      const started = await startBuiltGateway(spec.env);
      gatewayCache = (started.app as unknown as { cache: { metrics(): Record<string, unknown> } }).cache;
      if (spec.tenantLookup === 'static-map') useStaticMap(started.app);
      app = started.app;
      closeStarted = started.close;
      return started.port;
    }
  }
  await app.listen({ host: spec.host ?? '127.0.0.1', port: 0 });
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/**
 * Replaces the registry's `acquire` (the MCP route holds the registry object
 * itself, so this reaches it) with a lookup in a Map built once from the
 * runtimes serving now: no in-flight count, a release that does nothing.
 */
function useStaticMap(gateway: FastifyInstance): void {
  const tenants = (gateway as unknown as { tenants: { serving: ReadonlyMap<string, unknown>; acquire: unknown } })
    .tenants;
  const map = new Map(tenants.serving);
  const release = () => undefined;
  tenants.acquire = (id: string) => {
    const runtime = map.get(id);
    return runtime === undefined ? undefined : { runtime, release };
  };
}

answerParent<ServerSpec, Extract<ServerMessage, { stats: unknown }>['stats']>({
  start,
  stats() {
    const cpu = process.cpuUsage();
    const memory = memoryFigures();
    if (peak !== undefined) samplePeak();
    const sampled = peak;
    const sampledLive = live;
    peak = undefined;
    live = undefined;
    return {
      cpuMicros: cpu.user + cpu.system,
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      memory,
      ...(sampled === undefined ? {} : { peak: sampled }),
      ...(sampledLive === undefined ? {} : { live: sampledLive }),
      ...(gatewayCache === undefined ? {} : { cache: gatewayCache.metrics() }),
    };
  },
  close: () => (closeStarted ?? (() => app?.close() ?? Promise.resolve()))(),
});
