import { Backoff } from '@mcpgw/core';
import type pg from 'pg';
import { postgresDriver } from './pg-module.js';
import type { ListenHandlers } from './sql-database.js';

/** Postgres identifiers in LISTEN cannot be parameters: only plain lower-case names are accepted. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * LISTENs on a dedicated connection (a pooled one would lose its LISTEN when
 * returned). A lost connection is reopened with exponential backoff, and
 * `onResubscribed` tells the caller to compare what it holds with the store.
 */
export async function listenOnPostgres(
  connectionString: string,
  channel: string,
  handlers: ListenHandlers,
): Promise<() => Promise<void>> {
  if (!CHANNEL.test(channel)) throw new Error(`not a plain channel name: ${channel}`);
  const backoff = new Backoff();
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new (postgresDriver().Client)({ connectionString, connectionTimeoutMillis: 5000 });
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.onNotify(message.payload ?? '');
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
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
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

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const current = client;
    client = undefined;
    await current?.end().catch(() => undefined);
  };
}
