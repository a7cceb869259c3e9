import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { type ListenStream, openListen } from '@mcpgw/test-helpers/sse-listen';
import { validateStreamMessage } from '@mcpgw/test-helpers/wire-schema';

// Privileges are changes too, at a Postgres source that answers each caller
// under the database role their claims map to (callerIdentity, ADR 0013).
// A GRANT alone puts a table in the caller's listing (through the gateway's
// caches) and their listen stream hears list_changed; a REVOKE takes it out
// the same way; a new policy makes a subscribed table read differently, and
// its rows read anew. The acknowledgment (2026-07-28 basic/patterns/
// subscriptions, "Acknowledgment") honors only URIs the caller's role lists:
// a table another role reads and one that does not exist are left out alike.
// Real gateway, real Postgres roles, the source's catalog feed polling.

const PUBLIC_URL = 'http://127.0.0.1:1';
const SCHEMA = 'db+postgres:///crm/public';
const ACCOUNTS = `${SCHEMA}/accounts`;
const DEALS = `${SCHEMA}/deals`;
const MISSING = `${SCHEMA}/no_such_table`;
const LIST_CHANGED = 'notifications/resources/list_changed';
const UPDATED = 'notifications/resources/updated';

let issuer: LocalIssuer;
let gateway: StartedGateway;
let database: TestDatabase;
let roles: { login: string; sales: string; support: string };
const opened: ListenStream[] = [];

beforeAll(async () => {
  issuer = await startLocalIssuer({ path: '/idp' });
  database = await createTestDatabase('listen_privileges');
  const suffix = randomBytes(4).toString('hex');
  roles = { login: `mcpgw_login_${suffix}`, sales: `mcpgw_sales_${suffix}`, support: `mcpgw_support_${suffix}` };
  await database.sql(`
    CREATE ROLE ${roles.login} LOGIN NOINHERIT;
    CREATE ROLE ${roles.sales} NOLOGIN;
    CREATE ROLE ${roles.support} NOLOGIN;
    GRANT ${roles.sales}, ${roles.support} TO ${roles.login};
    GRANT CONNECT ON DATABASE ${database.name} TO ${roles.login};
    CREATE TABLE public.accounts (id int PRIMARY KEY);
    INSERT INTO public.accounts VALUES (1), (2), (3);
    ALTER TABLE public.accounts ENABLE ROW LEVEL SECURITY;
    CREATE POLICY first_row ON public.accounts FOR SELECT TO ${roles.support} USING (id = 1);
    CREATE TABLE public.deals (id int PRIMARY KEY);
    GRANT SELECT ON public.accounts TO ${roles.sales}, ${roles.support};
    GRANT SELECT ON public.deals TO ${roles.sales};
  `);
  const url = new URL(database.url);
  url.username = roles.login;
  url.password = '';
  const configDir = await mkdtemp(join(tmpdir(), 'gw-listen-privileges-'));
  gateway = await startGateway({
    bootstrap: {
      configDir,
      document: {
        tenants: [
          {
            id: 'acme',
            auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri, groupsClaim: 'groups' }] },
            // The same grants for both: only the database tells them apart.
            grants: [{ name: 'staff', match: { groups: ['sales', 'support'] }, allow: [{ source: 'crm' }] }],
            sources: [
              {
                id: 'crm',
                type: 'postgres',
                connection: { url: url.toString() },
                schemas: ['public'],
                rows: { enabled: true },
                // The login role owns nothing and is no superuser: the catalog is polled.
                changeDetection: { mode: 'poll', pollIntervalMs: 100 },
                callerIdentity: {
                  roles: [roles.sales, roles.support],
                  mapping: [
                    { match: { groups: ['sales'] }, role: roles.sales },
                    { match: { groups: ['support'] }, role: roles.support },
                  ],
                },
              },
            ],
          },
        ],
      },
    },
    env: { PUBLIC_URL, LISTEN_LIST_CHANGED_INTERVAL_MS: '0' },
  });
}, 120_000);

afterAll(async () => {
  for (const stream of opened) stream.close();
  await gateway?.close();
  await issuer?.close();
  if (roles !== undefined) {
    const names = Object.values(roles).join(', ');
    await database?.sql(`DROP OWNED BY ${names}; DROP ROLE ${names}`);
  }
  await database?.drop();
});

const tokenOf = (sub: string, groups: string[]) => issuer.token({ sub, groups, aud: `${PUBLIC_URL}/t/acme/mcp` });

async function listen(sub: string, groups: string[], subscriptions: string[]): Promise<ListenStream> {
  const stream = await openListen(
    `${gateway.baseUrl}/t/acme/mcp`,
    { resourcesListChanged: true, resourceSubscriptions: subscriptions },
    { id: sub, headers: { authorization: `Bearer ${await tokenOf(sub, groups)}` } },
  );
  opened.push(stream);
  expect(stream.status).toBe(200);
  return stream;
}

/** The URIs the stream's acknowledgment agreed to honor. */
async function acknowledged(stream: ListenStream): Promise<unknown> {
  const ack = await stream.next();
  expect(ack.method).toBe('notifications/subscriptions/acknowledged');
  return (ack.params as { notifications: { resourceSubscriptions?: unknown } }).notifications.resourceSubscriptions;
}

const methodAndUri = (message: Record<string, unknown>) => [
  message.method,
  (message.params as { uri?: string } | undefined)?.uri,
];

/** The stream's next `count` notifications, in the order they came. */
async function nextOf(stream: ListenStream, count: number): Promise<unknown[][]> {
  const got: unknown[][] = [];
  while (got.length < count) got.push(methodAndUri(await stream.next(10_000)));
  return got;
}

async function call<T>(
  sub: string,
  groups: string[],
  method: string,
  params: Record<string, unknown>,
): Promise<T | undefined> {
  const { body } = await mcpPost<{ result?: T }>(`${gateway.baseUrl}/t/acme/mcp`, method, params, {
    authorization: `Bearer ${await tokenOf(sub, groups)}`,
  });
  return body.result;
}

/** What the caller's own resources/list shows, through the gateway and its caches. */
async function listed(sub: string, groups: string[]): Promise<string[]> {
  const result = await call<{ resources: { uri: string }[] }>(sub, groups, 'resources/list', {});
  return (result?.resources ?? []).map((resource) => resource.uri);
}

/** The account ids the caller's rows read gives, through the gateway and its caches. */
async function accountIds(sub: string, groups: string[]): Promise<number[]> {
  const result = await call<{ contents: { text: string }[] }>(sub, groups, 'resources/read', {
    uri: `${ACCOUNTS}/rows`,
  });
  return (JSON.parse(result!.contents[0]!.text) as { rows: { id: number }[] }).rows.map((row) => row.id);
}

describe('privilege changes reach the caller’s listing and listen stream', () => {
  it('acknowledges a URI the caller’s role cannot read like one that does not exist', async () => {
    const wanted = [SCHEMA, DEALS, MISSING, ACCOUNTS];
    const alice = await listen('alice-ack', ['support'], wanted);
    const sam = await listen('sam-ack', ['sales'], wanted);
    expect(await acknowledged(alice)).toEqual([SCHEMA, ACCOUNTS]);
    expect(await acknowledged(sam)).toEqual([SCHEMA, DEALS, ACCOUNTS]);
    alice.close();
    sam.close();
  }, 30_000);

  it('tells a role that gains a table, and one that loses it, and re-reads after a policy change', async () => {
    const alice = await listen('alice', ['support'], [SCHEMA, ACCOUNTS]);
    expect(await acknowledged(alice)).toEqual([SCHEMA, ACCOUNTS]);
    // Cached now: what follows shows the change invalidated it.
    expect(await listed('alice', ['support'])).toEqual([SCHEMA, ACCOUNTS]);
    expect(await accountIds('alice', ['support'])).toEqual([1]);

    await database.sql(`GRANT SELECT ON public.deals TO ${roles.support}`);
    expect(await nextOf(alice, 2)).toEqual([
      [LIST_CHANGED, undefined],
      [UPDATED, SCHEMA],
    ]);
    expect(await listed('alice', ['support'])).toEqual([SCHEMA, ACCOUNTS, DEALS]);

    // Who reads the table is unchanged, what its rows give is not: the table reads anew, no list change.
    await database.sql(`CREATE POLICY third_row ON public.accounts FOR SELECT TO ${roles.support} USING (id = 3)`);
    expect(new Set(await nextOf(alice, 2))).toEqual(
      new Set([
        [UPDATED, SCHEMA],
        [UPDATED, ACCOUNTS],
      ]),
    );
    expect(await accountIds('alice', ['support'])).toEqual([1, 3]);

    await database.sql(`REVOKE SELECT ON public.deals FROM ${roles.support}`);
    expect(await nextOf(alice, 2)).toEqual([
      [LIST_CHANGED, undefined],
      [UPDATED, SCHEMA],
    ]);
    expect(await listed('alice', ['support'])).toEqual([SCHEMA, ACCOUNTS]);
    for (const message of alice.messages) expect(validateStreamMessage(message)).toEqual([]);
  }, 60_000);
});
