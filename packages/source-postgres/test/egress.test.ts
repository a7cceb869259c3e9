import { createEgressGuard, isGatewayError, silentLogger, type EgressGuard, type Source } from '@mcpgw/core';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSource } from '../src/postgres-source.js';
import { postgresSourceOptionsSchema } from '../src/postgres-source-options.js';

// A source a tenant admin configured connects through the egress guard: pg's
// socket is made by the guard's stream factory, which checks the host and
// the resolved address before anything is sent (docs/configuration.md,
// "Egress policy").

let db: TestDatabase;
const sources: Source[] = [];

beforeAll(async () => {
  db = await createTestDatabase('egress');
  await db.sql('CREATE TABLE notes (id int PRIMARY KEY)');
});
afterEach(async () => {
  await Promise.all(sources.splice(0).map((source) => source.close()));
});
afterAll(async () => {
  await db.drop();
});

function source(connection: Record<string, unknown>, egress: EgressGuard | undefined): Source {
  const options = postgresSourceOptionsSchema.parse({
    connection,
    schemas: ['public'],
    pool: { connectionTimeoutMs: 2000 },
    changeDetection: { mode: 'off' },
  });
  const created = createPostgresSource(options, 'crm', silentLogger, egress);
  sources.push(created);
  return created;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

const parts = () => {
  const url = new URL(db.url);
  return { port: Number(url.port || 5432), database: url.pathname.slice(1), user: decodeURIComponent(url.username) };
};

describe('a postgres source under the egress guard', () => {
  it.each([
    ['a loopback URL', () => ({ url: db.url }), '127.0.0.1'],
    ['a name resolving to loopback', () => ({ ...parts(), host: 'localhost' }), 'localhost ('],
    ['loopback in hexadecimal', () => ({ ...parts(), host: '0x7f000001' }), 'loopback'],
    ['a Unix socket', () => ({ ...parts(), host: '/var/run/postgresql' }), 'only operators may configure one'],
  ])('refuses %s before connecting', async (_name, connection, named) => {
    const refused = source(connection(), createEgressGuard());
    const health = await refused.health();
    expect(health.ok).toBe(false);
    expect(health.detail).toContain('refused by the egress policy');
    expect(health.detail).toContain(named);
    // Every refusal says what to change: the allowlist, or who may configure it.
    expect(health.detail).toMatch(/EGRESS_ALLOW|only operators/);
    const listing = await failure(refused.listResources({ limit: 10 }));
    expect(isGatewayError(listing) && listing.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(listing.message).toBe(
      `Postgres source "crm" is unavailable: the gateway's egress policy refuses its address`,
    );
  });

  it('connects where the operator allowlist says, and unguarded (an operator’s source)', async () => {
    const allowed = source({ url: db.url }, createEgressGuard({ allow: ['127.0.0.1'] }));
    expect(await allowed.health()).toEqual({ ok: true });
    const page = await allowed.listResources({ limit: 10 });
    expect(page.items.map((item) => item.uri)).toContain('db+postgres:///crm/public/notes');
    const byName = source({ ...parts(), host: 'localhost' }, undefined);
    expect(await byName.health()).toEqual({ ok: true });
  });
});
