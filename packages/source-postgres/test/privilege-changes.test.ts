import type { Source, SourceChange } from '@mcpgw/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerOf, createIdentityFixture, type IdentityFixture } from './caller-identity-fixture.js';

/**
 * A source with `callerIdentity` in event-trigger mode: a GRANT, a REVOKE, a
 * policy or row-level security change alone is a change event (the event
 * trigger hears each of these commands, and the fingerprint holds what they
 * change), and the listing and rows under the role follow. Real Postgres; the
 * source connects as the superuser (event triggers need it), and polls only
 * once an hour, so every prompt event came from the trigger.
 */
const P = 'db+postgres:///crm';
let fx: IdentityFixture;
let source: Source;
let feed: ReturnType<typeof record>;
const caller = callerOf({ subject: 'mia' });
const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

function record(watched: Source) {
  const events: SourceChange[] = [];
  let arrived: (() => void) | undefined;
  const stop = watched.watch!((change) => {
    events.push(change);
    arrived?.();
  });
  return {
    events,
    stop,
    clear: () => events.splice(0),
    /** Resolves once an arriving event makes `predicate` hold; the deadline only reports what did arrive. */
    until(predicate: (events: SourceChange[]) => boolean, timeoutMs = 10_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const deadline = setTimeout(() => {
          arrived = undefined;
          reject(new Error(`no matching events within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        arrived = () => {
          if (!predicate(events)) return;
          clearTimeout(deadline);
          arrived = undefined;
          resolve();
        };
        arrived();
      });
    },
  };
}

const has = (events: SourceChange[], change: SourceChange) =>
  events.some((e) => JSON.stringify(e) === JSON.stringify(change));
const listChanged = (...uris: string[]): SourceChange => ({ type: 'list-changed', uris });
const updated = (uri: string): SourceChange => ({ type: 'resource-updated', uri });

/** What the caller (acting as the minimal role) lists. */
async function listing(): Promise<string[]> {
  return (await source.listResources({ limit: 100, caller })).items.map((item) => item.uri);
}

/** The ids of `public.notices` the caller reads, or undefined when the table is not found for them. */
async function noticeIds(): Promise<number[] | undefined> {
  const contents = await source.read(`${P}/public/notices/rows`, undefined, undefined, caller);
  const first = contents?.[0];
  if (first === undefined || !('text' in first)) return undefined;
  return (JSON.parse(first.text) as { rows: { id: number }[] }).rows.map((row) => row.id);
}

/** Runs `sql`, waits until the feed reports `expected`, and hands back everything it reported for it. */
async function change(sql: string, ...expected: SourceChange[]): Promise<SourceChange[]> {
  feed.clear();
  await fx.db.sql(sql);
  await feed.until((events) => expected.every((e) => has(events, e)));
  await source.settled?.();
  return [...feed.events];
}

beforeAll(async () => {
  fx = await createIdentityFixture('privileges');
  source = fx.make({
    connection: { url: fx.db.url },
    changeDetection: { mode: 'event-trigger', pollIntervalMs: 3_600_000 },
    callerIdentity: {
      roles: [fx.roles.minimal, fx.roles.sales],
      mapping: [{ match: { groups: ['sales'] }, role: fx.roles.sales }],
      default: { role: fx.roles.minimal },
    },
  });
  feed = record(source);
  await source.settled?.(); // listening, with a baseline
}, 60_000);

afterAll(async () => {
  feed?.stop();
  await fx?.close();
});

describe('privilege changes at a source with callerIdentity', () => {
  it('reports a GRANT and a REVOKE on a table as a list change, and the listing follows', async () => {
    const minimal = q(fx.roles.minimal);
    expect(await listing()).toEqual([`${P}/public`, `${P}/public/notices`]);

    const granted = await change(
      `GRANT SELECT ON public.deals TO ${minimal}`,
      listChanged(`${P}/public/deals`),
      updated(`${P}/public/deals`),
    );
    expect(granted).toContainEqual({ type: 'resource-updated', uri: `${P}/public`, because: [`${P}/public/deals`] });
    expect(await listing()).toEqual([`${P}/public`, `${P}/public/deals`, `${P}/public/notices`]);

    await change(`REVOKE SELECT ON public.deals FROM ${minimal}`, listChanged(`${P}/public/deals`));
    expect(await listing()).toEqual([`${P}/public`, `${P}/public/notices`]);

    // One column is enough to read the table (the listing's own test).
    await change(`GRANT SELECT (id) ON public.deals TO ${minimal}`, listChanged(`${P}/public/deals`));
    expect(await listing()).toContain(`${P}/public/deals`);
    await change(`REVOKE SELECT (id) ON public.deals FROM ${minimal}`, listChanged(`${P}/public/deals`));
    expect(await listing()).not.toContain(`${P}/public/deals`);
  }, 30_000);

  it('reports schema USAGE as a list change of the schema', async () => {
    const minimal = q(fx.roles.minimal);
    await change(`GRANT USAGE ON SCHEMA sales TO ${minimal}`, listChanged(`${P}/sales`));
    // USAGE alone shows the schema, not its tables.
    expect(await listing()).toEqual([`${P}/public`, `${P}/public/notices`, `${P}/sales`]);
    await change(`REVOKE USAGE ON SCHEMA sales FROM ${minimal}`, listChanged(`${P}/sales`));
    expect(await listing()).not.toContain(`${P}/sales`);
  }, 30_000);

  it('reports row-level security and policy changes as updates of the table, and rows follow', async () => {
    const minimal = q(fx.roles.minimal);
    const notices = `${P}/public/notices`;
    expect(await noticeIds()).toEqual([1]);

    const enabled = await change('ALTER TABLE public.notices ENABLE ROW LEVEL SECURITY', updated(notices));
    // Who may see the table did not change: no list change.
    expect(enabled.filter((e) => e.type === 'list-changed')).toEqual([]);
    expect(await noticeIds()).toEqual([]);

    await change(`CREATE POLICY all_notices ON public.notices FOR SELECT TO ${minimal} USING (true)`, updated(notices));
    expect(await noticeIds()).toEqual([1]);

    await change('ALTER POLICY all_notices ON public.notices USING (id > 1)', updated(notices));
    expect(await noticeIds()).toEqual([]);

    await change('DROP POLICY all_notices ON public.notices', updated(notices));
    await change('ALTER TABLE public.notices DISABLE ROW LEVEL SECURITY', updated(notices));
    expect(await noticeIds()).toEqual([1]);
  }, 30_000);

  it('leaves a source without callerIdentity quiet about grants (everyone reads as the login role)', async () => {
    const plain = fx.make(
      { connection: { url: fx.db.url }, changeDetection: { mode: 'poll', pollIntervalMs: 50 } },
      'plain',
    );
    const heard = record(plain);
    try {
      await plain.settled?.();
      await fx.db.sql(`GRANT SELECT ON public.deals TO ${q(fx.roles.minimal)}`);
      // A comment is a change it reports: the comparison that reports it read the GRANT too.
      await fx.db.sql(`COMMENT ON TABLE public.notices IS 'marker'`);
      await heard.until((events) => has(events, updated('db+postgres:///plain/public/notices')));
      await plain.settled?.();
      expect(heard.events.some((e) => 'uri' in e && e.uri === 'db+postgres:///plain/public/deals')).toBe(false);
      expect(heard.events.filter((e) => e.type === 'list-changed')).toEqual([]);
    } finally {
      heard.stop();
      await fx.db.sql(
        `REVOKE SELECT ON public.deals FROM ${q(fx.roles.minimal)}; COMMENT ON TABLE public.notices IS NULL`,
      );
    }
  }, 30_000);
});
