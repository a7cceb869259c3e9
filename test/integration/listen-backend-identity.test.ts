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

// subscriptions/listen (MCP 2026-07-28, basic/patterns/subscriptions) for a
// Postgres source that answers each caller under the database role their
// claims map to (callerIdentity). Two callers of one tenant, the same grants
// (the whole source), different roles: what each is told of a change follows
// what their role may read, as their own resources/list does. A table only
// one role can read coming or going is announced to that caller only, and
// the schema overview both subscribed to reads differently only for them.
// Real gateway, real Postgres roles, the source's catalog feed polling.

const PUBLIC_URL = 'http://127.0.0.1:1';
const SCHEMA = 'db+postgres:///crm/public';
const LIST_CHANGED = 'notifications/resources/list_changed';
const UPDATED = 'notifications/resources/updated';

let issuer: LocalIssuer;
let gateway: StartedGateway;
let database: TestDatabase;
let roles: { login: string; sales: string; support: string };
const opened: ListenStream[] = [];

beforeAll(async () => {
  issuer = await startLocalIssuer({ path: '/idp' });
  database = await createTestDatabase('listen_identity');
  const suffix = randomBytes(4).toString('hex');
  roles = { login: `mcpgw_login_${suffix}`, sales: `mcpgw_sales_${suffix}`, support: `mcpgw_support_${suffix}` };
  await database.sql(`
    CREATE ROLE ${roles.login} LOGIN NOINHERIT;
    CREATE ROLE ${roles.sales} NOLOGIN;
    CREATE ROLE ${roles.support} NOLOGIN;
    GRANT ${roles.sales}, ${roles.support} TO ${roles.login};
    GRANT CONNECT ON DATABASE ${database.name} TO ${roles.login};
    CREATE TABLE public.accounts (id int PRIMARY KEY);
    GRANT SELECT ON public.accounts TO ${roles.sales}, ${roles.support};
  `);
  const url = new URL(database.url);
  url.username = roles.login;
  url.password = '';
  const configDir = await mkdtemp(join(tmpdir(), 'gw-listen-identity-'));
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

async function listen(sub: string, groups: string[]): Promise<ListenStream> {
  const token = await issuer.token({ sub, groups, aud: `${PUBLIC_URL}/t/acme/mcp` });
  const stream = await openListen(
    `${gateway.baseUrl}/t/acme/mcp`,
    { resourcesListChanged: true, resourceSubscriptions: [SCHEMA] },
    { id: sub, headers: { authorization: `Bearer ${token}` } },
  );
  opened.push(stream);
  expect(stream.status).toBe(200);
  expect((await stream.next()).params).toMatchObject({
    notifications: { resourcesListChanged: true, resourceSubscriptions: [SCHEMA] },
  });
  return stream;
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

/** What the caller's own resources/list shows, through the gateway. */
async function listed(sub: string, groups: string[]): Promise<string[]> {
  const token = await issuer.token({ sub, groups, aud: `${PUBLIC_URL}/t/acme/mcp` });
  const { body } = await mcpPost<{ result?: { resources: { uri: string }[] } }>(
    `${gateway.baseUrl}/t/acme/mcp`,
    'resources/list',
    {},
    { authorization: `Bearer ${token}` },
  );
  return (body.result?.resources ?? []).map((resource) => resource.uri);
}

describe('listen streams follow the caller’s database role', () => {
  it('announces a table only one role may read to that role’s caller only', async () => {
    const sam = await listen('sam', ['sales']);
    const alice = await listen('alice', ['support']);

    // Readable by sales only: sam's list and his schema overview change; alice's do not.
    await database.sql(`CREATE TABLE public.deals (id int); GRANT SELECT ON public.deals TO ${roles.sales}`);
    expect(await nextOf(sam, 2)).toEqual([
      [LIST_CHANGED, undefined],
      [UPDATED, SCHEMA],
    ]);
    expect(await listed('sam', ['sales'])).toContain(`${SCHEMA}/deals`);
    expect(await listed('alice', ['support'])).not.toContain(`${SCHEMA}/deals`);

    // Readable by both: each is told. Alice's stream is decided in order, so this being her
    // first notification shows the sales-only table reached her as nothing at all.
    await database.sql(
      `CREATE TABLE public.shared (id int); GRANT SELECT ON public.shared TO ${roles.sales}, ${roles.support}`,
    );
    const both = [
      [LIST_CHANGED, undefined],
      [UPDATED, SCHEMA],
    ];
    expect(await nextOf(sam, 2)).toEqual(both);
    expect(await nextOf(alice, 2)).toEqual(both);

    // The sales-only table goes: only the role that could read it hears of it (it is in the
    // listing from before the change, no longer in the one after).
    await database.sql('DROP TABLE public.deals');
    expect(await nextOf(sam, 2)).toEqual(both);
    await database.sql('DROP TABLE public.shared');
    expect(await nextOf(sam, 2)).toEqual(both);
    expect(await nextOf(alice, 2)).toEqual(both);

    // Nothing else reached alice: the two shared-table changes, in order, after the acknowledgment.
    expect(alice.messages.slice(1).map(methodAndUri)).toEqual([...both, ...both]);
    for (const message of [...alice.messages, ...sam.messages]) expect(validateStreamMessage(message)).toEqual([]);
  }, 60_000);
});
