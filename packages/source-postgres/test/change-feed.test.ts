import { randomBytes } from 'node:crypto';
import type { Source, SourceChange } from '@mcpgw/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFixture, type Fixture } from './fixture.js';

/**
 * The change feed against real Postgres in both modes: schema changes
 * become list-changed / resource-updated events for the right URIs.
 */
const P = 'db+postgres:///crm';
let fx: Fixture;

beforeAll(async () => {
  fx = await createFixture('feed');
});
afterAll(async () => {
  await fx?.close();
});

/**
 * Collects a source's events. `until` resolves as soon as an arriving event
 * makes the predicate hold (checked on each event, not by polling); the
 * deadline only turns a missing event into a failure with what did arrive.
 */
function record(source: Source) {
  const events: SourceChange[] = [];
  let arrived: (() => void) | undefined;
  const stop = source.watch!((change) => {
    events.push(change);
    arrived?.();
  });
  return {
    events,
    stop,
    clear: () => events.splice(0),
    until(predicate: (events: SourceChange[]) => boolean, timeoutMs = 10_000): Promise<SourceChange[]> {
      return new Promise((resolve, reject) => {
        const deadline = setTimeout(() => {
          arrived = undefined;
          reject(new Error(`no matching events within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        arrived = () => {
          if (!predicate(events)) return;
          clearTimeout(deadline);
          arrived = undefined;
          resolve(events);
        };
        arrived();
      });
    },
  };
}

const updated = (uri: string): SourceChange => ({ type: 'resource-updated', uri });
/** A schema overview that reads differently only because relations it shows changed. */
const shows = (uri: string, ...because: string[]): SourceChange => ({ type: 'resource-updated', uri, because });
const listChanged = (...uris: string[]): SourceChange => ({ type: 'list-changed', uris });
const has = (events: SourceChange[], change: SourceChange) =>
  events.some((e) => JSON.stringify(e) === JSON.stringify(change));
const sortedEvents = (events: SourceChange[]) => events.map((e) => JSON.stringify(e)).sort();

/**
 * The scenario both modes must pass. Where nothing must be reported, a later
 * visible change is the signal that the feed has looked: the comparison that
 * reports it read a catalog that already held the change before it, so an
 * event for that one would have come first or with it.
 */
async function scenario(source: Source): Promise<void> {
  const feed = record(source);
  // A comment only this run writes: each one is a change the feed must report.
  const marker = async () => {
    await fx.db.sql(`COMMENT ON TABLE public.customers IS 'Marker ${randomBytes(4).toString('hex')}'`);
    await feed.until((e) => has(e, updated(`${P}/public/customers`)));
    await source.settled?.();
  };
  try {
    await source.settled?.(); // the feed takes its baseline

    await fx.db.sql('CREATE TABLE public.fresh (id int)');
    await feed.until((e) => has(e, listChanged(`${P}/public/fresh`)) && has(e, updated(`${P}/public/fresh`)));
    expect(feed.events).toContainEqual(shows(`${P}/public`, `${P}/public/fresh`));
    feed.clear();

    await fx.db.sql('ALTER TABLE public.orders ADD COLUMN note text');
    await feed.until(
      (e) => has(e, updated(`${P}/public/orders`)) && has(e, shows(`${P}/public`, `${P}/public/orders`)),
    );
    // A list-changed for the ALTER would have come from the same comparison, before these.
    await source.settled?.();
    expect(feed.events.filter((e) => e.type === 'list-changed')).toEqual([]);
    feed.clear();

    await fx.db.sql(`COMMENT ON TABLE sales.invoices IS 'Bills ${randomBytes(4).toString('hex')}'`);
    await feed.until((e) => has(e, updated(`${P}/sales/invoices`)));
    expect(feed.events).toContainEqual(shows(`${P}/sales`, `${P}/sales/invoices`));
    feed.clear();

    // An index on a table is part of its description.
    await fx.db.sql('CREATE INDEX orders_note_idx ON public.orders (note)');
    await feed.until((e) => has(e, updated(`${P}/public/orders`)));
    feed.clear();

    // A new foreign key changes the referenced table too ("Referenced by"), but only for a
    // caller who may see the table that holds it: the update names it.
    await fx.db.sql('ALTER TABLE public.fresh ADD COLUMN customer_id bigint REFERENCES public.customers(id)');
    await feed.until(
      (e) => has(e, shows(`${P}/public/customers`, `${P}/public/fresh`)) && has(e, updated(`${P}/public/fresh`)),
    );
    await source.settled?.();
    expect(feed.events).not.toContainEqual(updated(`${P}/public/customers`));
    feed.clear();

    await fx.db.sql('DROP TABLE public.fresh');
    await feed.until((e) => has(e, listChanged(`${P}/public/fresh`)) && has(e, updated(`${P}/public/fresh`)));
    feed.clear();

    // Outside the allowlist, and row-estimate churn: no events but the marker's.
    // (A foreign key held outside the allowlist is no part of any description here either.)
    await fx.db.sql(
      'CREATE TABLE secret.hidden (id int, customer_id bigint REFERENCES public.customers(id)); INSERT INTO public.nokey VALUES (1); ANALYZE public.nokey',
    );
    await marker();
    expect(sortedEvents(feed.events)).toEqual(
      sortedEvents([shows(`${P}/public`, `${P}/public/customers`), updated(`${P}/public/customers`)]),
    );
    feed.clear();

    // A listener that left hears nothing more, while another one still does.
    const other = record(source);
    feed.stop();
    await fx.db.sql('CREATE TABLE public.after_stop (id int)');
    await other.until((e) => has(e, updated(`${P}/public/after_stop`)));
    other.stop();
    expect(feed.events).toEqual([]);
  } finally {
    feed.stop();
    await fx.db.sql(
      'DROP TABLE IF EXISTS public.after_stop, public.fresh, secret.hidden; DROP INDEX IF EXISTS public.orders_note_idx; ALTER TABLE public.orders DROP COLUMN IF EXISTS note',
    );
  }
}

async function listenSessions(): Promise<number> {
  const { rows } = await fx.db.sql(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
  );
  return (rows[0] as { n: number }).n;
}

describe('poll mode', () => {
  it('reports tables appearing, changing and disappearing', async () => {
    const source = fx.make({ changeDetection: { mode: 'poll', pollIntervalMs: 100 } }, 'crm');
    await scenario(source);
  }, 30_000);

  it('has no watch() when change detection is off', () => {
    expect(fx.make({ changeDetection: { mode: 'off' } }, 'crm').watch).toBeUndefined();
  });
});

describe('event-trigger mode', () => {
  it('installs an event trigger and reports changes through LISTEN/NOTIFY, not by polling', async () => {
    // An hour between polls: any prompt event came from the trigger.
    const source = fx.make({ changeDetection: { mode: 'event-trigger', pollIntervalMs: 3_600_000 } }, 'crm');
    await scenario(source);
    const { rows } = await fx.db.sql(`SELECT evtevent FROM pg_event_trigger WHERE evtname = 'mcpgw_ddl_crm'`);
    expect(rows).toEqual([{ evtevent: 'ddl_command_end' }]);
    await source.close();
    expect(await listenSessions()).toBe(0);
  }, 30_000);

  it('reconnects after its LISTEN session is killed and reports what changed meanwhile', async () => {
    const source = fx.make({ changeDetection: { mode: 'event-trigger', pollIntervalMs: 3_600_000 } }, 'crm');
    const feed = record(source);
    try {
      await source.settled?.(); // listening, with a baseline
      expect(await listenSessions()).toBe(1);
      await fx.db.sql(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`,
      );
      await fx.db.sql('CREATE TABLE public.while_away (id int)');
      await feed.until((e) => has(e, updated(`${P}/public/while_away`)));
      expect(await listenSessions()).toBe(1);
    } finally {
      feed.stop();
      await source.close();
      await fx.db.sql('DROP TABLE IF EXISTS public.while_away');
    }
  }, 30_000);

  it('falls back to polling when the role may not create event triggers', async () => {
    const role = `mcpgw_test_reader_${randomBytes(4).toString('hex')}`;
    await fx.db.sql(`CREATE ROLE ${role} LOGIN`);
    const url = new URL(fx.db.url);
    url.username = role;
    url.password = '';
    const source = fx.make(
      { connection: { url: url.toString() }, changeDetection: { mode: 'event-trigger', pollIntervalMs: 100 } },
      'limited',
    );
    const feed = record(source);
    try {
      await source.settled?.(); // refused the trigger, polling, with a baseline
      await fx.db.sql('CREATE TABLE public.seen_by_polling (id int)');
      await feed.until((e) =>
        has(e, { type: 'resource-updated', uri: 'db+postgres:///limited/public/seen_by_polling' }),
      );
      const { rows } = await fx.db.sql(
        `SELECT count(*)::int AS n FROM pg_event_trigger WHERE evtname = 'mcpgw_ddl_limited'`,
      );
      expect(rows[0]).toEqual({ n: 0 });
    } finally {
      feed.stop();
      await source.close();
      await fx.db.sql('DROP TABLE IF EXISTS public.seen_by_polling');
      await fx.db.sql(`DROP ROLE ${role}`).catch(() => undefined);
    }
  }, 30_000);
});
