import { isGatewayError, type ResourceContents, type Source, type SourceCaller } from '@mcpgw/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSourceOptionsSchema } from '../src/postgres-source-options.js';
import { callerOf, createIdentityFixture, type IdentityFixture } from './caller-identity-fixture.js';

// Each caller's listing and reads run under the database role their claims
// map to, with their claims in transaction-local settings that row-level
// security reads: the database, not only the gateway's grants, decides what
// they see. Real Postgres, real roles, real policies.

const P = 'db+postgres:///crm';
let fx: IdentityFixture;
let source: Source;

const alice = callerOf({ subject: 'alice', groups: ['support'] });
const bob = callerOf({ subject: 'bob', groups: ['support'] });
const seller = callerOf({ subject: 'sam', groups: ['sales', 'emea'] });
const stranger = callerOf({ subject: 'eve', groups: ['visitors'] });

beforeAll(async () => {
  fx = await createIdentityFixture('identity');
  source = fx.make({
    callerIdentity: {
      roles: [fx.roles.sales, fx.roles.support, fx.roles.minimal],
      mapping: [
        { match: { groups: ['sales'] }, role: fx.roles.sales },
        { match: { groups: ['support'] }, role: fx.roles.support },
      ],
    },
  });
}, 60_000);
afterAll(async () => {
  await fx?.close();
});

async function listed(s: Source, caller: SourceCaller | undefined): Promise<string[]> {
  const page = await s.listResources({ limit: 100, ...(caller === undefined ? {} : { caller }) });
  return page.items.map((item) => item.uri);
}

function textOf(contents: ResourceContents[] | undefined): string {
  const first = contents?.[0];
  if (first === undefined || !('text' in first)) throw new Error('expected a text content');
  return first.text;
}

async function rowsOf(s: Source, caller: SourceCaller | undefined, table: string): Promise<unknown[]> {
  const contents = await s.read(`${P}/${table}/rows`, undefined, undefined, caller);
  if (contents === undefined) return [];
  return (JSON.parse(textOf(contents)) as { rows: unknown[] }).rows;
}

async function failure(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

describe('callers of one tenant, different database roles', () => {
  it('lists only the schemas and tables the caller role may use', async () => {
    expect(await listed(source, seller)).toEqual([
      `${P}/public`,
      `${P}/public/accounts`,
      `${P}/public/deals`,
      `${P}/public/sealed`,
      `${P}/sales`,
      `${P}/sales/forecasts`,
    ]);
    // No USAGE on schema sales, no SELECT on deals or notices.
    expect(await listed(source, alice)).toEqual([`${P}/public`, `${P}/public/accounts`, `${P}/public/sealed`]);
  });

  it('reads the rows the policy gives each caller, and only those', async () => {
    const notes = async (caller: SourceCaller) =>
      ((await rowsOf(source, caller, 'public/accounts')) as { note: string }[]).map((row) => row.note);
    expect(await notes(alice)).toEqual(['alice-row-1', 'alice-row-2']);
    expect(await notes(bob)).toEqual(['bob-row-3']);
    expect(await notes(seller)).toEqual(['alice-row-1', 'alice-row-2', 'bob-row-3', 'carol-row-4']);
  });

  it('reads a table whose policy hides every row as empty, not as an error', async () => {
    for (const caller of [alice, seller]) {
      const contents = await source.read(`${P}/public/sealed/rows`, undefined, undefined, caller);
      // Found (the role may read the table), and empty (the policy hides every row).
      expect(contents).toBeDefined();
      expect(JSON.parse(textOf(contents))).toMatchObject({ table: 'sealed', rows: [] });
    }
  });

  it('answers a table or schema the role may not use as not found, like one that does not exist', async () => {
    expect(await source.read(`${P}/public/deals`, undefined, undefined, alice)).toBeUndefined();
    expect(await source.read(`${P}/public/deals/rows`, undefined, undefined, alice)).toBeUndefined();
    expect(await source.read(`${P}/sales`, undefined, undefined, alice)).toBeUndefined();
    expect(await source.read(`${P}/sales/forecasts`, undefined, undefined, alice)).toBeUndefined();
    expect(textOf(await source.read(`${P}/public/deals`, undefined, undefined, seller))).toContain('amount');
  });

  it('describes and counts only what the role may read: the schema overview names no other table', async () => {
    const overview = textOf(await source.read(`${P}/public`, undefined, undefined, alice));
    expect(overview).toContain('accounts');
    expect(overview).not.toContain('deals');
    expect(overview).not.toContain('notices');
  });

  it('shows a caller no mapping matches nothing, and never runs a query as the login role for them', async () => {
    expect(await listed(source, stranger)).toEqual([]);
    expect(await source.read(`${P}/public/notices`, undefined, undefined, stranger)).toBeUndefined();
    expect(await listed(source, undefined)).toEqual([]);
  });

  it('acts as the default role for a caller no mapping matches, when there is one', async () => {
    const withDefault = fx.make(
      {
        callerIdentity: {
          roles: [fx.roles.sales, fx.roles.minimal],
          mapping: [{ match: { groups: ['sales'] }, role: fx.roles.sales }],
          default: { role: fx.roles.minimal },
        },
      },
      'crm',
    );
    expect(await listed(withDefault, stranger)).toEqual([`${P}/public`, `${P}/public/notices`]);
    expect(await rowsOf(withDefault, stranger, 'public/notices')).toEqual([{ id: 1, body: 'hello' }]);
  });

  it('names the identity each caller gets, equal exactly for callers the database treats alike', () => {
    const identity = (caller: SourceCaller) => source.backendIdentity!(caller);
    expect(identity(alice).shown).toMatchObject({
      role: fx.roles.support,
      settings: {
        'mcpgw.subject': 'alice',
        'mcpgw.groups': '["support"]',
        'mcpgw.tenant': 'acme',
        'mcpgw.client_id': '',
      },
      applicationName: `mcpgw:crm:${alice.fingerprint.slice(0, 16)}`,
    });
    expect(identity(alice).key).not.toBe(identity(bob).key);
    // Same claims, another token: the same identity (the audit name is not part of it).
    expect(identity(callerOf({ subject: 'alice', groups: ['support'] })).key).toBe(identity(alice).key);
    expect(identity(stranger).shown).toMatchObject({ refused: true });
  });

  it('marks each session with the caller: application_name and the settings are visible to the backend', async () => {
    const withView = fx.make({
      callerIdentity: { roles: [fx.roles.sales], mapping: [{ match: { groups: ['sales'] }, role: fx.roles.sales }] },
      schemas: ['audit'],
    });
    await fx.db.sql(`CREATE SCHEMA IF NOT EXISTS audit;
      CREATE OR REPLACE VIEW audit.whoami WITH (security_invoker = true) AS
        SELECT current_user::text AS role, current_setting('application_name') AS app,
               current_setting('mcpgw.subject', true) AS subject, current_setting('mcpgw.groups', true) AS groups;
      GRANT USAGE ON SCHEMA audit TO "${fx.roles.sales}";
      GRANT SELECT ON audit.whoami TO "${fx.roles.sales}";`);
    const [row] = (await rowsOf(withView, seller, 'audit/whoami')) as Record<string, string>[];
    expect(row).toEqual({
      role: fx.roles.sales,
      app: `mcpgw:crm:${seller.fingerprint.slice(0, 16)}`,
      subject: 'sam',
      groups: '["emea","sales"]',
    });
    // Transaction-local: the next caller on the pooled connection carries only their own.
    const other = callerOf({ subject: 'sue', groups: ['sales'] });
    const [next] = (await rowsOf(withView, other, 'audit/whoami')) as Record<string, string>[];
    expect(next).toEqual({
      role: fx.roles.sales,
      app: `mcpgw:crm:${other.fingerprint.slice(0, 16)}`,
      subject: 'sue',
      groups: '["sales"]',
    });
  });
});

describe('claims that try to get out', () => {
  const hostile = [
    "alice' OR '1'='1",
    'alice"; SET ROLE postgres; --',
    "x'); SELECT set_config('role', 'postgres', false); --",
    'none',
    'alice\u0000postgres',
    'a'.repeat(9000),
    'ａｌｉｃｅ',
    '\uD800',
    'alice\u202e',
    '$1',
  ];

  it('keeps every hostile subject, group, scope and client id a value: nothing changes, nothing leaks', async () => {
    for (const value of hostile) {
      for (const caller of [
        callerOf({ subject: value, groups: ['support'] }),
        callerOf({ subject: 'x', groups: ['support', value] }),
        callerOf({ subject: 'x', groups: ['support'], scopes: [value] }),
        callerOf({ subject: 'x', groups: ['support'], clientId: value }),
        callerOf({ subject: 'x', groups: ['support'] }, value),
      ]) {
        let rows: unknown[] | Error;
        try {
          rows = await rowsOf(source, caller, 'public/accounts');
        } catch (error) {
          rows = error as Error;
        }
        if (rows instanceof Error) {
          // Only a value Postgres cannot hold as it is fails, with the reason, as unavailable to this caller.
          expect(isGatewayError(rows) && rows.code === 'MCPGW_SOURCE_UNAVAILABLE', String(rows)).toBe(true);
          expect(rows.message).toMatch(/NUL character|unpaired UTF-16 surrogate|longer than 8192 bytes/);
          continue;
        }
        // Under the support role a hostile subject matches no owner: no rows, never all of them.
        expect(rows).toEqual([]);
      }
    }
    // A hostile group never chooses a role: only the exact mapped value does.
    expect(await listed(source, callerOf({ subject: 'x', groups: ["sales' OR 1=1"] }))).toEqual([]);
    // Nothing changed: the roles, the table, the policy are as they were.
    expect(await rowsOf(source, alice, 'public/accounts')).toHaveLength(2);
    const { rows } = await fx.db.sql(`SELECT count(*)::int AS n FROM public.accounts`);
    expect(rows[0]).toEqual({ n: 4 });
  }, 60_000);
});

describe('a mapped role that cannot be used', () => {
  it('is a clear error for that caller, never another role or the login role', async () => {
    const doomed = `mcpgw_doomed_${fx.roles.login.slice(-8)}`;
    await fx.db.sql(`CREATE ROLE ${doomed} NOLOGIN; GRANT ${doomed} TO "${fx.roles.login}";
      GRANT SELECT ON public.notices TO ${doomed}`);
    const s = fx.make({
      callerIdentity: {
        roles: [doomed, fx.roles.minimal],
        mapping: [{ match: { groups: ['doomed'] }, role: doomed }],
        default: { role: fx.roles.minimal },
      },
    });
    const victim = callerOf({ subject: 'dan', groups: ['doomed'] });
    expect(await listed(s, victim)).toEqual([`${P}/public`, `${P}/public/notices`]);
    await fx.db.sql(`REVOKE SELECT ON public.notices FROM ${doomed}; DROP ROLE ${doomed}`);
    for (const attempt of [() => listed(s, victim), () => rowsOf(s, victim, 'public/notices')]) {
      const error = await failure(attempt);
      expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
      expect(error.message).toMatch(/database role your claims map to cannot be used/);
      expect(error.message).not.toContain(doomed);
    }
    // Another caller of the same source is unaffected.
    expect(await rowsOf(s, stranger, 'public/notices')).toEqual([{ id: 1, body: 'hello' }]);
  });
});

describe('callerIdentity options', () => {
  const base = { connection: { url: 'postgres://u@h/d' }, schemas: ['public'] };
  const issues = (callerIdentity: unknown) => {
    const parsed = postgresSourceOptionsSchema.safeParse({ ...base, callerIdentity });
    return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('refuses a mapping or default role outside the allowlist, naming the field', () => {
    expect(issues({ roles: ['a'], mapping: [{ match: { groups: ['g'] }, role: 'b' }] })).toEqual([
      'callerIdentity.mapping.0.role: role "b" is not in callerIdentity.roles, the roles an operator allows this source to act as',
    ]);
    expect(issues({ roles: ['a'], default: { role: 'c' } })[0]).toMatch(/^callerIdentity\.default\.role: role "c"/);
  });

  it('refuses roles that would mean the login role, and malformed entries', () => {
    expect(issues({ roles: ['NONE'] })[0]).toMatch(/^callerIdentity\.roles\.0: must name a real role/);
    expect(issues({ roles: ['public'] })[0]).toMatch(/must name a real role/);
    expect(issues({ roles: [] })[0]).toMatch(/^callerIdentity\.roles/);
    expect(issues({ roles: ['a\u0000b'] })[0]).toMatch(/no NUL/);
    expect(issues({ roles: ['a'], mapping: [{ match: { groups: [] }, role: 'a' }] })[0]).toMatch(/groups/);
    expect(issues({ roles: ['a'], settings: ['subject', 'password'] })[0]).toMatch(/settings/);
    expect(issues({ roles: ['a'], mapping: [{ match: { group: ['g'] }, role: 'a' }] })[0]).toMatch(/match/);
  });

  it('defaults to refusing unmatched callers and to every setting', () => {
    const parsed = postgresSourceOptionsSchema.parse({ ...base, callerIdentity: { roles: ['a'] } });
    expect(parsed.callerIdentity).toEqual({ roles: ['a'], mapping: [], default: 'refuse', settings: true });
  });
});
