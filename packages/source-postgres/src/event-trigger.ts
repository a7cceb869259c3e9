import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { quoteIdent } from './quote-ident.js';

/**
 * The NOTIFY channel (and trigger/function name) of a source: `mcpgw_ddl_`
 * plus the source id with `-` as `_`. Source ids are `[a-z0-9][a-z0-9-]*`,
 * so the mapping is one-to-one; ids too long for a 63-byte identifier are
 * replaced by a hash.
 */
export function changeChannel(sourceId: string): string {
  const plain = `mcpgw_ddl_${sourceId.replaceAll('-', '_')}`;
  const name =
    plain.length <= 63 ? plain : `mcpgw_ddl_${createHash('sha256').update(sourceId).digest('hex').slice(0, 40)}`;
  if (!/^[a-z0-9_]+$/.test(name)) throw new TypeError('source id is not a slug');
  return name;
}

/** Schema holding the gateway's notify functions; drop it to uninstall. */
export const EVENT_TRIGGER_SCHEMA = 'mcpgw';

/**
 * Installs (idempotently, safe across replicas) an event trigger that sends
 * `NOTIFY <channel>` at the end of every DDL command in the database. This is
 * the one write the source ever makes, only in `event-trigger` mode, which the
 * operator opts into; Postgres 15 requires superuser for event triggers.
 * It filters on no command tag on purpose: `ddl_command_end` also fires for
 * `GRANT`, `REVOKE`, `CREATE`/`ALTER`/`DROP POLICY` and `ALTER TABLE ... ROW
 * LEVEL SECURITY`, which change what a `callerIdentity` role sees (the
 * fingerprint holds them, see catalog-fingerprint.ts). Role membership
 * (`GRANT role TO role`) is cluster-wide and fires no event trigger: only
 * the next comparison (a later notification, a reconnect, or polling) sees it.
 * `channel` is a checked slug and is quoted anyway.
 */
export async function installEventTrigger(pool: Pool, channel: string): Promise<void> {
  const client = await pool.connect();
  let failed: Error | undefined;
  // See inReadOnlyTransaction: a checked-out client's 'error' must be heard.
  const onError = (error: Error) => (failed ??= error);
  client.on('error', onError);
  try {
    // The pool's sessions default to read-only (defence in depth): this one
    // transaction is explicitly read-write.
    await client.query('BEGIN TRANSACTION READ WRITE');
    await client.query('SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext($1))', ['mcpgw-event-trigger']);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(EVENT_TRIGGER_SCHEMA)}`);
    const fn = `${quoteIdent(EVENT_TRIGGER_SCHEMA)}.${quoteIdent(channel)}`;
    const literal = `'${channel.replaceAll("'", "''")}'`;
    await client.query(
      `CREATE OR REPLACE FUNCTION ${fn}() RETURNS event_trigger LANGUAGE plpgsql AS $mcpgw$
       BEGIN PERFORM pg_catalog.pg_notify(${literal}, tg_tag); END $mcpgw$`,
    );
    const existing = await client.query('SELECT 1 FROM pg_catalog.pg_event_trigger WHERE evtname = $1', [channel]);
    if (existing.rowCount === 0) {
      await client.query(`CREATE EVENT TRIGGER ${quoteIdent(channel)} ON ddl_command_end EXECUTE FUNCTION ${fn}()`);
    }
    await client.query('COMMIT');
  } catch (error) {
    failed ??= error instanceof Error ? error : new Error(String(error));
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(failed);
  }
}
