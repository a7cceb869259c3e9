/**
 * Both control-plane engines for tests: the real Postgres server (a fresh
 * database per call) and PGlite in memory. Tests run the same assertions on
 * each, since production uses the first and `npm start` the second.
 */
import type { SqlDatabase } from '../src/sql-database.js';
import { createPgliteDatabase } from '../src/pglite-database.js';
import { createPostgresDatabase } from '../src/postgres-database.js';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';

export interface EngineUnderTest {
  readonly db: SqlDatabase;
  /** The connection string (Postgres only). */
  readonly url?: string;
  /** A second handle on the same database (another replica); PGlite has none. */
  readonly connectAgain?: () => SqlDatabase;
  dispose(): Promise<void>;
}

export const ENGINES: Record<'postgres' | 'pglite', () => Promise<EngineUnderTest>> = {
  async postgres() {
    const database = await createTestDatabase('control_plane');
    const handles: SqlDatabase[] = [];
    const connect = (): SqlDatabase => {
      const db = createPostgresDatabase({ url: database.url });
      handles.push(db);
      return db;
    };
    return {
      db: connect(),
      url: database.url,
      connectAgain: connect,
      async dispose() {
        await Promise.all(handles.map((db) => db.close().catch(() => undefined)));
        await database.drop();
      },
    };
  },
  async pglite() {
    const db = await createPgliteDatabase();
    return { db, dispose: () => db.close() };
  },
};
