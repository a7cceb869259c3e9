/**
 * The baseline of bench/postgres-read.ts: a hand-written Fastify route that
 * answers `resources/read` of one rows URI of a Postgres table, run as a
 * child process (server-child.ts starts it with this module) so its CPU time
 * is its own.
 *
 * It does the backend work the postgres source does for that read: the same
 * statements (the source's own catalog lookups and row batches, built by
 * the package's `findRelation` and `readRows`, so the SQL is the source's to
 * the byte) on a pool with the same settings (`connectionConfig`, `max`,
 * idle timeout) against the same database, each statement on the extended
 * protocol, on one connection checked out for the read. What it leaves out is
 * what the source adds around them: no read-only transaction, no timeouts of
 * its own, no session reset. A hand-written route would not have them; the
 * requirement is that the gateway's guarantees cost at most a fifth.
 *
 * The response body is the gateway's, byte for byte (the bench checks it):
 * the same JSON-RPC envelope around the same document text.
 */
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type * as IpcServerModule from './ipc-server.js';

const { answerParent } = (await import(new URL('./ipc-server.ts', import.meta.url).href)) as typeof IpcServerModule;

export interface PostgresReadRouteSpec {
  kind: 'postgres-read-route';
  host: string;
  /** The database the gateway's source reads. */
  url: string;
  /** The source's id, schema and table: the URI the gateway answers. */
  sourceId: string;
  schema: string;
  table: string;
  limit: number;
  poolMax: number;
  /** The result members the gateway sends besides `contents`, in its order (e.g. `ttlMs`, `cacheScope`). */
  resultAfter: Record<string, unknown>;
  resultBefore: Record<string, unknown>;
}

const dist = (file: string) => new URL(`../../packages/source-postgres/dist/${file}`, import.meta.url).href;
type RunQuery = <Row extends pg.QueryResultRow>(text: string, values: readonly unknown[]) => Promise<Row[]>;
const { findRelation } = (await import(dist('catalog-queries.js'))) as {
  findRelation(query: RunQuery, schema: string, table: string): Promise<object | undefined>;
};
const { readRows } = (await import(dist('read-rows.js'))) as {
  readRows(
    query: RunQuery,
    relation: object,
    request: { limit: number; after: undefined; columns: undefined },
    exclude: readonly unknown[],
    baseUri: string,
  ): Promise<{ text: string }>;
};
const { connectionConfig } = (await import(dist('connection-config.js'))) as {
  connectionConfig(options: unknown, sourceId: string): pg.ClientConfig;
};
const { postgresSourceOptionsSchema } = (await import(dist('postgres-source-options.js'))) as {
  postgresSourceOptionsSchema: { parse(input: unknown): { statementTimeoutMs: number } };
};
const { tableUri } = (await import(dist('resource-uri.js'))) as {
  tableUri(sourceId: string, schema: string, table: string): string;
};
const { default: pgModule } = (await import('pg')) as { default: typeof pg };

let app: FastifyInstance | undefined;
let pool: pg.Pool | undefined;

async function start(spec: PostgresReadRouteSpec): Promise<number> {
  const options = postgresSourceOptionsSchema.parse({
    connection: { url: spec.url },
    schemas: [spec.schema],
    rows: { enabled: true, maxLimit: spec.limit },
  });
  // What the source's pool is (postgres-source.ts): its connection settings, its size, its idle timeout.
  pool = new pgModule.Pool({
    ...connectionConfig(options, spec.sourceId),
    max: spec.poolMax,
    idleTimeoutMillis: 30_000,
  });
  const readPool = pool;
  const rowsBase = `${tableUri(spec.sourceId, spec.schema, spec.table)}/rows`;
  const uri = `${rowsBase}?limit=${spec.limit}`;
  app = Fastify();
  app.post('/mcp', async (request, reply) => {
    const body = request.body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { uri?: unknown } };
    if (body?.jsonrpc !== '2.0' || body.method !== 'resources/read' || body.params?.uri !== uri) {
      return reply
        .code(400)
        .send({ jsonrpc: '2.0', id: body?.id ?? null, error: { code: -32602, message: 'unknown resource' } });
    }
    const client = await readPool.connect();
    let text: string;
    try {
      const query: RunQuery = async (sql, values) =>
        (await client.query({ text: sql, values: [...values], queryMode: 'extended' } as pg.QueryConfig)).rows;
      const relation = await findRelation(query, spec.schema, spec.table);
      if (relation === undefined) throw new Error('no such table');
      text = (
        await readRows(query, relation, { limit: spec.limit, after: undefined, columns: undefined }, [], rowsBase)
      ).text;
    } finally {
      client.release();
    }
    return reply.type('application/json').send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: body.id,
        result: {
          ...spec.resultBefore,
          contents: [{ uri, mimeType: 'application/json', text }],
          ...spec.resultAfter,
        },
      }),
    );
  });
  await app.listen({ host: spec.host, port: 0 });
  const address = app.server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

answerParent<PostgresReadRouteSpec, { cpuMicros: number }>({
  start,
  stats() {
    const cpu = process.cpuUsage();
    return { cpuMicros: cpu.user + cpu.system };
  },
  async close() {
    await app?.close();
    await pool?.end();
  },
});
