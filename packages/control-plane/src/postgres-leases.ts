import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { LeaseHandlers, Leases } from '@mcpgw/core';
import { Backoff } from '@mcpgw/core';
import { postgresDriver } from './pg-module.js';

export interface PostgresLeasesOptions {
  /** DATABASE_URL: the leases live on a dedicated connection (a pooled one would hand its locks to the next user). */
  readonly url: string;
  /** Names the locks: the key is a hash of `<prefix><name>`. Default `mcpgw:lease:`. */
  readonly prefix?: string;
  /** How often a lease not held is tried again (a takeover waits at most this long). Default 1,000 ms. */
  readonly retryMs?: number;
  /** How long the connection has to answer an attempt, or it counts as lost. Default 5,000 ms. */
  readonly answerMs?: number;
  /** The connection was lost or could not be opened (it is reopened with backoff); for logs. */
  readonly onLost?: (error: unknown) => void;
}

export interface PostgresLeases extends Leases {
  /** The connection's application_name in pg_stat_activity (operators find it there; tests end it by it). */
  readonly connectionName: string;
  /** Ends the connection, which frees every lease it holds. */
  close(): Promise<void>;
}

/**
 * The key of a lease's advisory lock: 64 bits of SHA-256 of its name, as the
 * signed bigint `pg_try_advisory_lock(bigint)` takes. `hashtext` would give
 * 32 bits, enough for two sources of a deployment to share a lock once it
 * has tens of thousands.
 */
export function advisoryLockKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}

interface Hold {
  readonly key: string;
  readonly handlers: LeaseHandlers;
  /** What the handlers were last told. */
  held: boolean;
  /** This session holds the advisory lock. */
  locked: boolean;
  /** Another replica held it at some point: acquiring it then is a takeover. */
  sawOther: boolean;
  released: boolean;
}

// A session may take an advisory lock it holds again (the locks stack), so one
// attempt per key is made at a time, by the first hold of that key here.
const TRY_LOCKS = 'SELECT key::text AS key, pg_try_advisory_lock(key) AS locked FROM unnest($1::bigint[]) AS key';

/**
 * Leases as session-level advisory locks on one connection of this replica
 * (docs/adr/0012-one-bus-two-transports.md), for a replica bus on Postgres:
 * a lease is held while this session holds its lock, freed at once by its
 * release or when the session ends (crash, pg_terminate_backend, a dropped
 * connection), and a contender takes it at its next attempt, every
 * `retryMs`. Without an answer from Postgres each replica acts as the holder
 * for its own callers (as the Redis leases do, and as without the bus, which
 * is down with it); the first answer decides again. The connection opens with
 * the first hold.
 */
export function createPostgresLeases(options: PostgresLeasesOptions): PostgresLeases {
  const prefix = options.prefix ?? 'mcpgw:lease:';
  const retryMs = options.retryMs ?? 1000;
  const answerMs = options.answerMs ?? 5000;
  const connectionName = `mcpgw-lease-${randomBytes(9).toString('base64url')}`;
  const holds = new Set<Hold>();
  const backoff = new Backoff();
  let client: pg.Client | undefined;
  let connectAfter = 0;
  let busy = false;
  let again = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const become = (hold: Hold, next: boolean) => {
    if (hold.released || closed || hold.held === next) return;
    hold.held = next;
    if (next) hold.handlers.acquired(hold.sawOther);
    else {
      hold.sawOther = true;
      hold.handlers.lost();
    }
  };

  /** The session is gone, and its locks with it: until Postgres answers again, every hold here acts for itself. */
  const lose = (lost: pg.Client, error: unknown) => {
    if (client !== lost) return;
    client = undefined;
    connectAfter = Date.now() + backoff.next();
    void lost.end().catch(() => undefined);
    if (closed) return;
    options.onLost?.(error);
    for (const hold of holds) {
      hold.locked = false;
      become(hold, true);
    }
  };

  const connect = async (): Promise<pg.Client> => {
    const next = new (postgresDriver().Client)({
      connectionString: options.url,
      connectionTimeoutMillis: answerMs,
      application_name: connectionName,
      keepAlive: true,
    });
    next.on('error', (error) => lose(next, error));
    next.on('end', () => lose(next, new Error('connection ended')));
    try {
      await next.connect();
      // A replica cut off without a word keeps its locks until the server sees the session is dead:
      // with these, within about 25 s rather than the system's default two hours (loopback and Unix sockets ignore them).
      await next.query('SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3');
    } catch (error) {
      void next.end().catch(() => undefined);
      throw error;
    }
    client = next;
    backoff.reset();
    return next;
  };

  /** One round trip: the locks not held here are tried together; with none to try, the connection is asked to answer. */
  const attempt = async (): Promise<void> => {
    if (holds.size === 0) return;
    let session = client;
    if (session === undefined) {
      if (Date.now() < connectAfter) return;
      try {
        session = await connect();
      } catch (error) {
        connectAfter = Date.now() + backoff.next();
        options.onLost?.(error);
        for (const hold of holds) become(hold, true);
        return;
      }
    }
    const lockedKeys = new Set([...holds].filter((hold) => hold.locked).map((hold) => hold.key));
    const tried = [...new Set([...holds].filter((hold) => !lockedKeys.has(hold.key)).map((hold) => hold.key))];
    const current = session;
    let deadline: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        tried.length === 0
          ? current.query('SELECT 1')
          : current.query<{ key: string; locked: boolean }>(TRY_LOCKS, [tried]),
        new Promise<never>((_resolve, reject) => {
          deadline = setTimeout(
            () => reject(new Error(`the lease connection did not answer within ${answerMs} ms`)),
            answerMs,
          );
        }),
      ]);
      if (tried.length === 0) return;
      for (const row of answer.rows as { key: string; locked: boolean }[]) settle(current, row.key, row.locked);
    } catch (error) {
      lose(current, error);
    } finally {
      clearTimeout(deadline);
    }
  };

  const settle = (session: pg.Client, key: string, locked: boolean) => {
    const owner = [...holds].find((hold) => hold.key === key);
    if (owner === undefined) {
      // Released while the attempt was on its way: the lock is nobody's here.
      if (locked) void session.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => undefined);
      return;
    }
    for (const hold of holds) {
      if (hold.key !== key) continue;
      if (hold === owner && locked) {
        hold.locked = true;
        become(hold, true);
      } else {
        hold.sawOther = true;
        become(hold, false);
      }
    }
  };

  const run = () => {
    if (closed) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    void attempt().finally(() => {
      busy = false;
      if (again) {
        again = false;
        run();
      }
    });
  };

  return {
    connectionName,
    hold(name, handlers) {
      const hold: Hold = {
        key: advisoryLockKey(`${prefix}${name}`),
        handlers,
        held: false,
        locked: false,
        sawOther: false,
        released: false,
      };
      if (closed) return () => undefined;
      holds.add(hold);
      if (timer === undefined) {
        timer = setInterval(run, retryMs);
        timer.unref();
      }
      run();
      return () => {
        if (hold.released) return;
        hold.released = true;
        holds.delete(hold);
        // Freed for the others at once; a stacked lock would outlive this hold, so it is unlocked once.
        if (hold.locked && client !== undefined) {
          void client.query('SELECT pg_advisory_unlock($1)', [hold.key]).catch(() => undefined);
        }
        // Another hold of the same key here may take it now.
        if ([...holds].some((other) => other.key === hold.key)) run();
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      holds.clear();
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
