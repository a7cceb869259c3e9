/**
 * The real backends the store's tests run on: the control plane on the test
 * Postgres server and on embedded PGlite (both migrated to the current
 * schema), and the test Redis under a key namespace of the run's own. Each
 * offers a second handle on the same data, as another replica would have:
 * a second Postgres pool, a second Redis connection (PGlite is one process's
 * database, so its second handle is itself).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createPgliteDatabase, createPostgresDatabase, migrate, type SqlDatabase } from '@mcpgw/control-plane';
import { createControlPlaneDatabase } from '@mcpgw/test-helpers/control-plane-database';
import { deleteNamespace, redisUrl, requireRedis, testNamespace } from '@mcpgw/test-helpers/redis';

export interface SqlUnderTest {
  readonly engine: 'postgres' | 'pglite';
  readonly db: SqlDatabase;
  /** The same database as another replica sees it. */
  readonly replica: SqlDatabase;
  close(): Promise<void>;
}

export const SQL_ENGINES: Record<'postgres' | 'pglite', () => Promise<SqlUnderTest>> = {
  async postgres() {
    const leased = await createControlPlaneDatabase();
    const db = createPostgresDatabase({ url: leased.url });
    const replica = createPostgresDatabase({ url: leased.url });
    return {
      engine: 'postgres',
      db,
      replica,
      async close() {
        await Promise.all([db.close(), replica.close()]);
        await leased.release();
      },
    };
  },
  async pglite() {
    const db = await createPgliteDatabase();
    await migrate(db);
    return { engine: 'pglite', db, replica: db, close: () => db.close() };
  },
};

/**
 * A keyed tenant tag as the gateway gives the store one (an HMAC of the id, 16 hex digits): the tests
 * then see what a deployment's Redis holds, no tenant id in the clear.
 */
export const testTenantTag = (tenantId: string): string =>
  createHmac('sha256', 'authorization-server tests').update(`tenant\u0000${tenantId}`).digest('hex').slice(0, 16);

export interface RedisUnderTest {
  readonly namespace: string;
  readonly client: Redis;
  /** A second connection, as another replica's. */
  readonly replica: Redis;
  close(): Promise<void>;
}

export async function openTestRedis(label: string): Promise<RedisUnderTest> {
  await requireRedis();
  const namespace = testNamespace(label);
  const client = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  const replica = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
  return {
    namespace,
    client,
    replica,
    async close() {
      client.disconnect();
      replica.disconnect();
      await deleteNamespace(namespace);
    },
  };
}

/** A tenant row (the records' foreign key) with a fresh id. */
export async function createTenant(db: SqlDatabase, label = 'tenant'): Promise<string> {
  const id = `${label}-${randomBytes(4).toString('hex')}`;
  await db.query(`INSERT INTO tenants (id, document) VALUES ($1, '{}'::jsonb)`, [id]);
  return id;
}

/** A clock the test moves by hand (ms since the epoch). */
export function manualClock(start = Date.UTC(2026, 0, 1)): { now: () => number; advance(ms: number): void } {
  let at = start;
  return {
    now: () => at,
    advance(ms) {
      at += ms;
    },
  };
}
