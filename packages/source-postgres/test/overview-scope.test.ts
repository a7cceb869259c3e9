import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceContents } from '@mcpgw/core';
import { OVERVIEW_MAX_RELATIONS } from '../src/postgres-documents.js';
import { createFixture, type Fixture } from './fixture.js';

/**
 * The bounded schema overview for a caller who may see part of a wide
 * schema: it fills up with visible relations only, and "N more" counts only
 * visible ones.
 */
const P = 'db+postgres:///wide';
const TABLES = 1100;
let fx: Fixture;

beforeAll(async () => {
  fx = await createFixture('overview_scope');
  await fx.db.sql(`
    CREATE SCHEMA wide;
    DO $$ BEGIN
      FOR i IN 1..${TABLES} LOOP
        EXECUTE format('CREATE TABLE wide.%I (id int)', 't' || lpad(i::text, 4, '0'));
      END LOOP;
    END $$;
  `);
});
afterAll(async () => {
  await fx?.close();
});

const text = (contents: ResourceContents[] | undefined) => {
  const first = contents?.[0];
  return first !== undefined && 'text' in first ? first.text : '';
};
const listed = (overview: string) => [...overview.matchAll(/^\| (t\d{4}) \|/gm)].map((m) => m[1]);

describe('schema overview through a caller’s view', () => {
  it('shows the first visible relations and counts only the visible rest', async () => {
    const source = fx.make({ schemas: ['wide'], changeDetection: { mode: 'off' } }, 'wide');
    // Odd-numbered tables only: 550 of 1100.
    const odd = (uri: string) => uri === `${P}/wide` || /[13579]$/.test(uri);
    const overview = text(await source.read(`${P}/wide`, undefined, odd));
    const names = listed(overview);
    expect(names).toHaveLength(OVERVIEW_MAX_RELATIONS);
    expect(names.every((n) => /[13579]$/.test(n ?? ''))).toBe(true);
    expect(names.at(-1)).toBe('t0999');
    expect(overview).toContain('…and 50 more.');
  });

  it('counts every relation for a caller who sees them all', async () => {
    const source = fx.make({ schemas: ['wide'], changeDetection: { mode: 'off' } }, 'wide');
    const overview = text(await source.read(`${P}/wide`));
    expect(listed(overview)).toHaveLength(OVERVIEW_MAX_RELATIONS);
    expect(overview).toContain(`…and ${TABLES - OVERVIEW_MAX_RELATIONS} more.`);
  });
});
