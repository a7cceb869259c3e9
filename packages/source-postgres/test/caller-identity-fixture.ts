import { randomBytes } from 'node:crypto';
import { silentLogger, type Principal, type Source, type SourceCaller } from '@mcpgw/core';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { createPostgresSource } from '../src/postgres-source.js';
import { postgresSourceOptionsSchema, type PostgresSourceConfig } from '../src/postgres-source-options.js';

/**
 * A database whose access rules live in Postgres: a NOINHERIT login role
 * (what the gateway connects as, owning nothing) that is a member of three
 * roles, and tables those roles see differently.
 *
 * - `sales` reads `public.accounts` (every row, by policy) and `public.deals`,
 *   and uses schema `sales` (`sales.forecasts`);
 * - `support` reads only its own rows of `public.accounts` (an RLS policy on
 *   `mcpgw.subject`) and nothing else;
 * - `minimal` reads `public.notices` only;
 * - `public.sealed` has row-level security and no policy: every role that may
 *   read it reads no rows.
 *
 * Roles are cluster-wide, so their names carry a random suffix and `close`
 * drops them with the database.
 */
export interface IdentityFixture {
  db: TestDatabase;
  roles: { login: string; sales: string; support: string; minimal: string };
  /** A source over the database as the login role; `callerIdentity` and the rest merged over the defaults. */
  make(extra?: Partial<PostgresSourceConfig>, id?: string): Source;
  close(): Promise<void>;
}

export async function createIdentityFixture(label: string): Promise<IdentityFixture> {
  const db = await createTestDatabase(label);
  const suffix = randomBytes(4).toString('hex');
  // Mixed case and a space: the role name is never parsed as SQL.
  const roles = {
    login: `mcpgw_login_${suffix}`,
    sales: `Sales Team ${suffix}`,
    support: `mcpgw_support_${suffix}`,
    minimal: `mcpgw_minimal_${suffix}`,
  };
  const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
  await db.sql(`
    CREATE ROLE ${q(roles.login)} LOGIN NOINHERIT;
    CREATE ROLE ${q(roles.sales)} NOLOGIN;
    CREATE ROLE ${q(roles.support)} NOLOGIN;
    CREATE ROLE ${q(roles.minimal)} NOLOGIN;
    GRANT ${q(roles.sales)}, ${q(roles.support)}, ${q(roles.minimal)} TO ${q(roles.login)};
    CREATE TABLE public.accounts (id int PRIMARY KEY, owner text NOT NULL, note text NOT NULL);
    INSERT INTO public.accounts VALUES (1, 'alice', 'alice-row-1'), (2, 'alice', 'alice-row-2'),
                                       (3, 'bob', 'bob-row-3'), (4, 'carol', 'carol-row-4');
    ALTER TABLE public.accounts ENABLE ROW LEVEL SECURITY;
    CREATE POLICY own_rows ON public.accounts FOR SELECT TO ${q(roles.support)}
      USING (owner = current_setting('mcpgw.subject', true));
    CREATE POLICY every_row ON public.accounts FOR SELECT TO ${q(roles.sales)} USING (true);
    CREATE TABLE public.deals (id int PRIMARY KEY, amount int NOT NULL);
    INSERT INTO public.deals VALUES (1, 100), (2, 200);
    CREATE TABLE public.notices (id int PRIMARY KEY, body text NOT NULL);
    INSERT INTO public.notices VALUES (1, 'hello');
    CREATE TABLE public.sealed (id int PRIMARY KEY, body text NOT NULL);
    INSERT INTO public.sealed VALUES (1, 'never shown');
    ALTER TABLE public.sealed ENABLE ROW LEVEL SECURITY;
    CREATE SCHEMA sales;
    CREATE TABLE sales.forecasts (id int PRIMARY KEY, q text NOT NULL);
    INSERT INTO sales.forecasts VALUES (1, 'Q1');
    REVOKE ALL ON SCHEMA sales FROM PUBLIC;
    GRANT USAGE ON SCHEMA sales TO ${q(roles.sales)};
    GRANT SELECT ON public.accounts, public.deals, public.sealed, sales.forecasts TO ${q(roles.sales)};
    GRANT SELECT ON public.accounts, public.sealed TO ${q(roles.support)};
    GRANT SELECT ON public.notices TO ${q(roles.minimal)};
    GRANT CONNECT ON DATABASE ${db.name} TO ${q(roles.login)};
  `);
  const made: Source[] = [];
  const url = new URL(db.url);
  url.username = roles.login;
  url.password = '';
  return {
    db,
    roles,
    make(extra = {}, id = 'crm') {
      const parsed = postgresSourceOptionsSchema.parse({
        connection: { url: url.toString() },
        schemas: ['public', 'sales'],
        rows: { enabled: true },
        changeDetection: { mode: 'off' },
        ...extra,
      });
      const source = createPostgresSource(parsed, id, silentLogger);
      made.push(source);
      return source;
    },
    async close() {
      await Promise.all(made.map((s) => s.close()));
      // Roles outlive the database: their grants in it go first, then they do.
      const names = Object.values(roles).map(q).join(', ');
      await db.sql(`DROP OWNED BY ${names}; DROP ROLE ${names}`);
      await db.drop();
    },
  };
}

/** The caller the catalog would pass for these claims (fingerprint as the policy would give one). */
export function callerOf(principal: Partial<Principal> & { subject: string }, tenantId = 'acme'): SourceCaller {
  return {
    tenantId,
    principal: {
      issuer: 'https://idp.example',
      scopes: [],
      groups: [],
      expiresAt: 4_000_000_000,
      ...principal,
    },
    fingerprint: `fp-${randomBytes(8).toString('hex')}`,
  };
}
