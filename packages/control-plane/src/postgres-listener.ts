import { Backoff } from '@mcpgw/core';
import type pg from 'pg';
import { postgresDriver } from './pg-module.js';
import type { ListenHandlers } from './sql-database.js';

/** Postgres identifiers in LISTEN cannot be parameters: only plain lower-case names are accepted. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/** How often the listening connection is asked a trivial query, and how long it has to answer. */
export const LISTEN_HEARTBEAT_MS = 5000;

/**
 * LISTENs on a dedicated connection (a pooled one would lose its LISTEN when
 * returned), to one channel or several (the replica bus's and the control
 * plane's share one connection and one heartbeat). A lost connection is reopened with exponential backoff, and
 * `onResubscribed` tells the caller to compare what it holds with the store
 * (the gap of docs/adr/0012-one-bus-two-transports.md). A connection that went
 * silent without an error (a half-open one, on which notifications would
 * never arrive) is found by a heartbeat: a `SELECT 1` every `heartbeatMs`
 * that must answer within as long, or the connection counts as lost.
 */
export async function listenOnPostgres(
  connectionString: string,
  channel: string | readonly string[],
  handlers: ListenHandlers,
  heartbeatMs = LISTEN_HEARTBEAT_MS,
  /** The connection's application_name (operators find it in pg_stat_activity; tests end it by it). */
  applicationName = 'mcpgw-listener',
): Promise<() => Promise<void>> {
  const channels = typeof channel === 'string' ? [channel] : [...channel];
  for (const name of channels) if (!CHANNEL.test(name)) throw new Error(`not a plain channel name: ${name}`);
  if (channels.length === 0) throw new Error('no channel to listen to');
  const backoff = new Backoff();
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let lose: ((error: unknown) => void) | undefined;

  const connect = async (): Promise<void> => {
    const next = new (postgresDriver().Client)({
      connectionString,
      connectionTimeoutMillis: 5000,
      application_name: applicationName,
    });
    next.on('notification', (message) => {
      if (channels.includes(message.channel)) handlers.onNotify(message.payload ?? '', message.channel);
    });
    const lost = (error: unknown): void => {
      if (client !== next || stopped) return;
      client = undefined;
      handlers.onLost?.(error);
      void next.end().catch(() => undefined);
      schedule();
    };
    next.on('error', lost);
    next.on('end', () => lost(new Error('connection ended')));
    lose = lost;
    try {
      await next.connect();
      for (const name of channels) await next.query(`LISTEN ${name}`);
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    if (stopped) {
      await next.end().catch(() => undefined);
      return;
    }
    client = next;
    backoff.reset();
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      connect().then(
        () => handlers.onResubscribed?.(),
        (error: unknown) => {
          handlers.onLost?.(error);
          schedule();
        },
      );
    }, backoff.next());
    timer.unref();
  };

  const heartbeat = setInterval(() => {
    const current = client;
    if (current === undefined || stopped) return;
    let answered = false;
    const deadline = setTimeout(() => {
      if (!answered) lose?.(new Error(`the listening connection did not answer within ${heartbeatMs} ms`));
    }, heartbeatMs);
    deadline.unref();
    current.query('SELECT 1').then(
      () => {
        answered = true;
        clearTimeout(deadline);
      },
      // A failed query is the connection's 'error' too, or the deadline's.
      () => undefined,
    );
  }, heartbeatMs);
  heartbeat.unref();

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    clearInterval(heartbeat);
    const current = client;
    client = undefined;
    await current?.end().catch(() => undefined);
  };
}
