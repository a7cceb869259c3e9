import { mkdir, mkdtemp, rename, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteContext } from '@mcpgw/control-plane';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { type ListenStream, openListen } from '@mcpgw/test-helpers/sse-listen';
import { validateStreamMessage } from '@mcpgw/test-helpers/wire-schema';
import { within } from '@mcpgw/test-helpers/within';

// subscriptions/listen (MCP 2026-07-28, basic/patterns/subscriptions) against
// a real gateway whose sources really change: a files source whose watcher
// sees files come, change and go, a static source whose configuration is
// edited through the control plane, and a Postgres source whose catalog feed
// sees tables and foreign keys come. Alice's grants cover only part of each
// source (the `pub` folder and its `.md` files; the `note://pub/` notes); bob
// sees everything. A change to resources outside alice's set must reach her
// as nothing at all: no `list_changed`, and no `updated` even for the folder
// she may see and subscribed to (its read shows her only her files). Each
// hidden change is proven processed by bob's notification for it; alice's
// stream is compared in full at the end, after a last visible change.

const PUBLIC_URL = 'http://127.0.0.1:1';
const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'ops' }, clientAddress: '127.0.0.1' };
const PUB = 'file:///docs/pub/';
const PUB_A = 'file:///docs/pub/a.md';
const PRIV_B = 'file:///docs/priv/b.md';
const NOTE_PUB = 'note://pub/1';
const NOTE_PRIV = 'note://priv/1';
const LIST_CHANGED = 'notifications/resources/list_changed';
const UPDATED = 'notifications/resources/updated';

let issuer: LocalIssuer;
let gateway: StartedGateway;
let root: string;
let database: TestDatabase;
const TABLES = 'db+postgres:///tables/public';
const CUSTOMERS = `${TABLES}/customers`;
const opened: ListenStream[] = [];

async function listen(
  sub: string,
  notifications: Record<string, unknown>,
  id: string,
  tenant = 'acme',
): Promise<ListenStream> {
  const token = await issuer.token({ sub, aud: `${PUBLIC_URL}/t/${tenant}/mcp` });
  const stream = await openListen(`${gateway.baseUrl}/t/${tenant}/mcp`, notifications, {
    id,
    headers: { authorization: `Bearer ${token}` },
  });
  opened.push(stream);
  expect(stream.status).toBe(200);
  return stream;
}

const methodAndUri = (message: Record<string, unknown>) => [
  message.method,
  (message.params as { uri?: string } | undefined)?.uri,
];

/** How many messages of each stream `receives` has looked at. */
const looked = new WeakMap<ListenStream, number>();

/** Waits until `stream` has received all of `expected` (in any order, as often as listed) since the last call for it. */
async function receives(stream: ListenStream, expected: (string | undefined)[][]): Promise<void> {
  const from = looked.get(stream) ?? 1;
  const missing = () => {
    const got = stream.messages.slice(from).map((message) => JSON.stringify(methodAndUri(message)));
    // Each expected message matches one received message of its own.
    return expected.filter((item) => {
      const at = got.indexOf(JSON.stringify(item));
      if (at !== -1) got.splice(at, 1);
      return at === -1;
    });
  };
  while (missing().length > 0) {
    await stream.next(10_000).catch((error: Error) => {
      const got = JSON.stringify(stream.messages.slice(from).map(methodAndUri));
      throw new Error(`${error.message}: still waiting for ${JSON.stringify(missing())}, got ${got}`);
    });
  }
  looked.set(stream, stream.messages.length);
}

/** Writes a file in one step (a hidden temporary, then a rename), so one scan sees it whole. */
async function put(path: string, text: string): Promise<void> {
  const temporary = join(root, `.tmp-${Math.random().toString(36).slice(2)}`);
  await writeFile(temporary, text);
  await rename(temporary, join(root, path));
}

/** Every source of the tenant's serving runtime has taken its baseline (after a start or a swap). */
async function settled(tenant = 'acme'): Promise<void> {
  await Promise.all(gateway.app.tenants.serving.get(tenant)!.catalog.sources.map((source) => source.settled?.()));
}

/** Edits the static source through the control plane and waits until a runtime with it serves. */
async function putNotes(resources: { uri: string; name: string; text: string }[]): Promise<void> {
  const before = gateway.app.tenants.status('acme')?.servingRevision;
  await gateway.app.controlPlane!.store.putEntity(admin, 'acme', 'source', 'notes', { type: 'static', resources });
  await within(
    10_000,
    () => expect(gateway.app.tenants.status('acme')?.servingRevision).not.toBe(before),
    'the source change applied',
  );
}

beforeAll(async () => {
  issuer = await startLocalIssuer({ path: '/idp' });
  root = await mkdtemp(join(tmpdir(), 'gw-listen-hidden-'));
  await mkdir(join(root, 'pub'));
  await mkdir(join(root, 'priv'));
  await writeFile(join(root, 'pub', 'a.md'), '# A\n');
  await writeFile(join(root, 'priv', 'b.md'), '# B\n');
  database = await createTestDatabase('listen_hidden');
  await database.sql('CREATE TABLE public.customers (id bigint PRIMARY KEY)');
  const configDir = await mkdtemp(join(tmpdir(), 'gw-listen-hidden-config-'));
  gateway = await startGateway({
    bootstrap: {
      configDir,
      document: {
        tenants: [
          {
            id: 'acme',
            auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
            grants: [
              {
                name: 'alice-pub',
                match: { subjects: ['alice'] },
                allow: [
                  { source: 'docs', uris: [PUB, 'file:///docs/pub/*.md'] },
                  { source: 'notes', uris: ['note://pub/**'] },
                ],
              },
              { name: 'bob-all', match: { subjects: ['bob'] }, allow: [{ source: 'docs' }, { source: 'notes' }] },
            ],
            sources: [
              { id: 'docs', type: 'files', root },
              {
                id: 'notes',
                type: 'static',
                resources: [
                  { uri: NOTE_PUB, name: 'pub', text: 'public' },
                  { uri: NOTE_PRIV, name: 'priv', text: 'private' },
                ],
              },
            ],
          },
          {
            id: 'crm',
            auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
            grants: [
              {
                name: 'alice-customers',
                match: { subjects: ['alice'] },
                allow: [{ source: 'tables', uris: [TABLES, `${TABLES}/customer*`] }],
              },
              { name: 'bob-all', match: { subjects: ['bob'] }, allow: [{ source: 'tables' }] },
            ],
            sources: [
              {
                id: 'tables',
                type: 'postgres',
                connection: { url: database.url },
                schemas: ['public'],
                changeDetection: { mode: 'event-trigger' },
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
  await database?.drop();
});

describe('subscriptions/listen follows the caller’s own view of real source changes', () => {
  it('tells a caller nothing of resources outside their grants, and everything of their own', async () => {
    const alice = await listen(
      'alice',
      { resourcesListChanged: true, resourceSubscriptions: [PUB, PUB_A, NOTE_PUB] },
      'a',
    );
    const bob = await listen('bob', { resourcesListChanged: true, resourceSubscriptions: [PUB, PRIV_B] }, 'b');
    expect((await alice.next()).params).toMatchObject({
      notifications: { resourcesListChanged: true, resourceSubscriptions: [PUB, PUB_A, NOTE_PUB] },
    });
    await bob.next();
    await settled();

    // Hidden from alice: a file she may not see appears in the folder she may see, and one in a
    // folder she may not see. Bob's set changed, and the folder he subscribed to reads differently.
    await put('pub/secret.txt', 'hidden');
    await put('priv/new.md', 'hidden');
    await receives(bob, [
      [LIST_CHANGED, undefined],
      [UPDATED, PUB],
    ]);
    // A hidden file changes, then one goes.
    await put('priv/b.md', '# B, revised\n');
    await receives(bob, [[UPDATED, PRIV_B]]);
    await unlink(join(root, 'pub', 'secret.txt'));
    await receives(bob, [
      [LIST_CHANGED, undefined],
      [UPDATED, PUB],
    ]);
    // Every scan the watcher owes is done, and alice has heard nothing.
    await settled();
    expect(alice.messages).toHaveLength(1);

    // Her own: a file she may see appears (her list and her folder change; the new file
    // itself is not one she subscribed to), then the file she subscribed to changes.
    await put('pub/c.md', '# C\n');
    await receives(alice, [
      [LIST_CHANGED, undefined],
      [UPDATED, PUB],
    ]);
    await put('pub/a.md', '# A, revised\n');
    await receives(alice, [
      [UPDATED, PUB],
      [UPDATED, PUB_A],
    ]);
    await receives(bob, [
      [LIST_CHANGED, undefined],
      [UPDATED, PUB],
      [UPDATED, PUB],
    ]);

    // Configuration: a note she may not see is edited and another added. Bob's set grew.
    const before = bob.messages.length;
    await putNotes([
      { uri: NOTE_PUB, name: 'pub', text: 'public' },
      { uri: NOTE_PRIV, name: 'priv', text: 'private, revised' },
      { uri: 'note://priv/2', name: 'priv 2', text: 'more' },
    ]);
    await receives(bob, [[LIST_CHANGED, undefined]]);
    await settled();
    // Then the note she subscribed to is edited: an update, and her set did not move.
    await putNotes([
      { uri: NOTE_PUB, name: 'pub', text: 'public, revised' },
      { uri: NOTE_PRIV, name: 'priv', text: 'private, revised' },
      { uri: 'note://priv/2', name: 'priv 2', text: 'more' },
    ]);
    await receives(alice, [[UPDATED, NOTE_PUB]]);

    expect(alice.messages.slice(1).map(methodAndUri)).toEqual([
      [LIST_CHANGED, undefined],
      [UPDATED, PUB],
      [UPDATED, PUB],
      [UPDATED, PUB_A],
      [UPDATED, NOTE_PUB],
    ]);
    // Bob heard of the hidden notes' change once, as a list change; their text is no read of his.
    expect(bob.messages.slice(before).map(methodAndUri)).toEqual([[LIST_CHANGED, undefined]]);
    for (const message of [...alice.messages, ...bob.messages]) expect(validateStreamMessage(message)).toEqual([]);
  }, 60_000);

  it('tells a caller nothing of a table they may not see, even one whose foreign key names theirs', async () => {
    const alice = await listen(
      'alice',
      { resourcesListChanged: true, resourceSubscriptions: [TABLES, CUSTOMERS] },
      'a',
      'crm',
    );
    const bob = await listen('bob', { resourcesListChanged: true, resourceSubscriptions: [CUSTOMERS] }, 'b', 'crm');
    await alice.next();
    await bob.next();
    await settled('crm');

    // A table alice may not see appears, with a foreign key to the one she may: bob's list changed,
    // and so did his description of customers ("Referenced by"); hers did not, nor did her overview.
    await database.sql('CREATE TABLE public.invoices (id int, customer_id bigint REFERENCES public.customers (id))');
    await receives(bob, [
      [LIST_CHANGED, undefined],
      [UPDATED, CUSTOMERS],
    ]);

    // Then a table she may see: her list and her overview change (the table itself is not one she
    // subscribed to). Her first list_changed, so everything sent to her before it has arrived too.
    await database.sql('CREATE TABLE public.customer_notes (id int)');
    await receives(alice, [
      [LIST_CHANGED, undefined],
      [UPDATED, TABLES],
    ]);
    expect(alice.messages.slice(1).map(methodAndUri)).toEqual([
      [LIST_CHANGED, undefined],
      [UPDATED, TABLES],
    ]);
    for (const message of [...alice.messages, ...bob.messages]) expect(validateStreamMessage(message)).toEqual([]);
  }, 60_000);
});
