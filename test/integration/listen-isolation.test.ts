import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteContext } from '@mcpgw/control-plane';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type ListenStream, openListen } from '@mcpgw/test-helpers/sse-listen';
import { validateStreamMessage } from '@mcpgw/test-helpers/wire-schema';
import { within } from '@mcpgw/test-helpers/within';

// Per-caller filtering of subscriptions/listen (MCP 2026-07-28,
// basic/patterns/subscriptions) against a real gateway: two tenants whose
// sources have the same ids (so the same URIs), and two principals of one
// tenant with different grants and overlapping subscriptions. Events are
// published on the app's bus as the producers would; each stream's messages
// are compared in full after a final event every stream must get, so a
// notification that reached the wrong caller cannot go unnoticed. Every
// message is validated against the 2026-07-28 schema.

const PUBLIC_URL = 'http://127.0.0.1:1';
const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'ops' }, clientAddress: '127.0.0.1' };
const SUB = 'io.modelcontextprotocol/subscriptionId';
const PUB_A = 'file:///docs/pub/a.md';
const PRIV_B = 'file:///docs/priv/b.md';
const NOTE = 'note://n';

let issuer: LocalIssuer;
let gateway: StartedGateway;
const opened: ListenStream[] = [];

const endpoint = (tenant: string) => `${gateway.baseUrl}/t/${tenant}/mcp`;
const tokenFor = (tenant: string, sub: string, extra: Record<string, unknown> = {}) =>
  issuer.token({ sub, aud: `${PUBLIC_URL}/t/${tenant}/mcp`, ...extra });

async function listen(tenant: string, sub: string, notifications: Record<string, unknown>, id: string | number) {
  const stream = await openListen(endpoint(tenant), notifications, {
    id,
    headers: { authorization: `Bearer ${await tokenFor(tenant, sub)}` },
  });
  opened.push(stream);
  expect(stream.status).toBe(200);
  return stream;
}

/** Every message valid against the schema and tagged with the stream's id. */
function expectWellFormed(stream: ListenStream, id: string | number): void {
  for (const message of stream.messages) {
    expect(validateStreamMessage(message)).toEqual([]);
    const meta = ((message.params ?? message.result) as { _meta?: Record<string, unknown> })._meta;
    expect(meta?.[SUB]).toBe(id);
  }
}

const methodAndUri = (message: Record<string, unknown>) => [
  message.method,
  (message.params as { uri?: string } | undefined)?.uri,
];

async function writeDocs(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'gw-listen-docs-'));
  await mkdir(join(root, 'pub'));
  await mkdir(join(root, 'priv'));
  await writeFile(join(root, 'pub', 'a.md'), '# A\n');
  await writeFile(join(root, 'priv', 'b.md'), '# B\n');
  return root;
}

beforeAll(async () => {
  issuer = await startLocalIssuer({ path: '/idp' });
  const auth = { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] };
  const configDir = await mkdtemp(join(tmpdir(), 'gw-listen-config-'));
  gateway = await startGateway({
    bootstrap: {
      configDir,
      document: {
        tenants: [
          {
            id: 'acme',
            auth,
            grants: [
              {
                name: 'alice-pub',
                match: { subjects: ['alice'] },
                allow: [{ source: 'docs', uris: ['file:///docs/pub/**'] }],
              },
              { name: 'bob-all', match: { subjects: ['bob'] }, allow: [{ source: 'docs' }, { source: 'notes' }] },
            ],
            sources: [
              { id: 'docs', type: 'files', root: await writeDocs() },
              { id: 'notes', type: 'static', resources: [{ uri: NOTE, name: 'n', text: 'N' }] },
            ],
          },
          {
            id: 'beta',
            auth,
            grants: [{ name: 'everyone', match: {}, allow: [{ source: 'docs' }] }],
            sources: [{ id: 'docs', type: 'files', root: await writeDocs() }],
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
});

describe('subscriptions/listen, per caller', () => {
  it("acknowledges only the URIs in the caller's set: one outside it looks like one that does not exist", async () => {
    const requested = [PUB_A, PRIV_B, 'file:///docs/pub/missing.md', 'other://x', NOTE];
    const alice = await listen('acme', 'alice', { resourcesListChanged: true, resourceSubscriptions: requested }, 'a1');
    const bob = await listen('acme', 'bob', { resourceSubscriptions: requested, toolsListChanged: true }, 7);
    expect(alice.headers.get('content-type')).toBe('text/event-stream');
    expect(alice.headers.get('x-accel-buffering')).toBe('no');
    expect(await alice.next()).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      // A URI no source owns, and one alice's grants do not cover, are both left out; a visible
      // URI of a source she may see is kept even before it exists (it may be created).
      params: {
        notifications: { resourcesListChanged: true, resourceSubscriptions: [PUB_A, 'file:///docs/pub/missing.md'] },
      },
    });
    // No tools here: toolsListChanged is not honored, so it is left out.
    expect((await bob.next()).params).toEqual({
      _meta: { [SUB]: 7 },
      notifications: { resourceSubscriptions: [PUB_A, PRIV_B, 'file:///docs/pub/missing.md', NOTE] },
    });
    expectWellFormed(alice, 'a1');
    expectWellFormed(bob, 7);
    alice.close();
    bob.close();
  });

  it('delivers each event only to the callers who may see what it is about, across tenants and principals', async () => {
    const subscriptions = [PUB_A, PRIV_B, NOTE];
    const alice = await listen(
      'acme',
      'alice',
      { resourcesListChanged: true, resourceSubscriptions: subscriptions },
      1,
    );
    const bob = await listen('acme', 'bob', { resourcesListChanged: true, resourceSubscriptions: subscriptions }, 2);
    const carol = await listen(
      'beta',
      'carol',
      { resourcesListChanged: true, resourceSubscriptions: subscriptions },
      3,
    );
    // Bob lists only what he asked for: no list_changed for him on this one.
    const dave = await listen('acme', 'bob', { resourceSubscriptions: [PUB_A] }, 4);
    for (const stream of [alice, bob, carol, dave]) await stream.next();

    const events = gateway.app.events;
    events.publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: PRIV_B },
    });
    events.publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'notes',
      change: { type: 'list-changed', uris: [NOTE] },
    });
    events.publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'notes',
      change: { type: 'resource-updated', uri: NOTE },
    });
    events.publish({
      type: 'source',
      tenantId: 'beta',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: PUB_A },
    });
    // An unsubscribed URI that everyone may see: nobody.
    events.publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: 'file:///docs/pub/c.md' },
    });
    // The final event: everyone of acme with docs visible gets a list_changed (if asked), then an update of PUB_A.
    events.publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'docs',
      change: { type: 'list-changed', uris: ['file:///docs/pub/c.md'] },
    });
    events.publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: PUB_A },
    });
    events.publish({ type: 'stale', tenantId: 'beta' });

    const until = async (stream: ListenStream, count: number) => {
      while (stream.messages.length < count) await stream.next();
    };
    await until(alice, 3);
    await until(bob, 6);
    await until(dave, 2);
    await until(carol, 5);
    expect(alice.messages.slice(1).map(methodAndUri)).toEqual([
      ['notifications/resources/list_changed', undefined],
      ['notifications/resources/updated', PUB_A],
    ]);
    expect(bob.messages.slice(1).map(methodAndUri)).toEqual([
      ['notifications/resources/updated', PRIV_B],
      ['notifications/resources/list_changed', undefined],
      ['notifications/resources/updated', NOTE],
      ['notifications/resources/list_changed', undefined],
      ['notifications/resources/updated', PUB_A],
    ]);
    expect(dave.messages.slice(1).map(methodAndUri)).toEqual([['notifications/resources/updated', PUB_A]]);
    // Carol: her tenant's update of the same URI, then the stale event's list_changed and a
    // re-read hint for each subscribed URI she may see (her grants cover all of her docs).
    expect(carol.messages.slice(1).map(methodAndUri)).toEqual([
      ['notifications/resources/updated', PUB_A],
      ['notifications/resources/list_changed', undefined],
      ['notifications/resources/updated', PUB_A],
      ['notifications/resources/updated', PRIV_B],
    ]);
    // Nothing more arrived in the meantime.
    expect([alice.messages.length, bob.messages.length, dave.messages.length, carol.messages.length]).toEqual([
      3, 6, 2, 5,
    ]);
    for (const [stream, id] of [
      [alice, 1],
      [bob, 2],
      [carol, 3],
      [dave, 4],
    ] as const)
      expectWellFormed(stream, id);
    for (const stream of [alice, bob, carol, dave]) stream.close();
  });

  it('tells only the caller whose set a grant change moved, and stops their updates for what they lost', async () => {
    const alice = await listen('acme', 'alice', { resourcesListChanged: true, resourceSubscriptions: [PUB_A] }, 'a');
    const bob = await listen('acme', 'bob', { resourcesListChanged: true, resourceSubscriptions: [PUB_A] }, 'b');
    const carol = await listen('beta', 'carol', { resourcesListChanged: true, resourceSubscriptions: [PUB_A] }, 'c');
    for (const stream of [alice, bob, carol]) await stream.next();
    // A stream holds neither the runtime nor an in-flight slot of its tenant.
    expect(gateway.app.limits.inFlight.count('acme')).toBe(0);

    const before = gateway.app.tenants.status('acme')?.servingRevision;
    await gateway.app.controlPlane!.store.putEntity(admin, 'acme', 'grant', 'alice-pub', {
      match: { subjects: ['alice'] },
      allow: [{ source: 'notes' }],
    });
    await within(
      10_000,
      () => expect(gateway.app.tenants.status('acme')?.servingRevision).not.toBe(before),
      'the grant change applied',
    );
    gateway.app.events.publish({ type: 'configuration', tenantId: 'acme' });
    gateway.app.events.publish({ type: 'configuration', tenantId: 'beta' });
    gateway.app.events.publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: PUB_A },
    });
    gateway.app.events.publish({
      type: 'source',
      tenantId: 'beta',
      sourceId: 'docs',
      change: { type: 'resource-updated', uri: PUB_A },
    });

    expect(methodAndUri(await alice.next())).toEqual(['notifications/resources/list_changed', undefined]);
    // Bob's set did not move: no list_changed, only the update; carol's tenant did not change at all.
    expect(methodAndUri(await bob.next())).toEqual(['notifications/resources/updated', PUB_A]);
    expect(methodAndUri(await carol.next())).toEqual(['notifications/resources/updated', PUB_A]);
    // Alice can no longer see PUB_A: the update that bob got is not hers. A final event she gets proves none is pending.
    gateway.app.events.publish({
      type: 'source',
      tenantId: 'acme',
      sourceId: 'notes',
      change: { type: 'list-changed', uris: [NOTE] },
    });
    expect(methodAndUri(await alice.next())).toEqual(['notifications/resources/list_changed', undefined]);
    expect(methodAndUri(await bob.next())).toEqual(['notifications/resources/list_changed', undefined]);
    expect(alice.messages).toHaveLength(3);
    expect(bob.messages).toHaveLength(3);
    expectWellFormed(alice, 'a');
    // Her reads agree with her stream.
    const read = await mcpPost(
      endpoint('acme'),
      'resources/read',
      { uri: PUB_A },
      {
        authorization: `Bearer ${await tokenFor('acme', 'alice')}`,
      },
    );
    expect((read.body as { error?: { code: number } }).error?.code).toBe(-32602);
    for (const stream of [alice, bob, carol]) stream.close();
  });
  it('tells subscribers of a reconfigured source that its resources changed, and nobody else', async () => {
    const bob = await listen('acme', 'bob', { resourcesListChanged: true, resourceSubscriptions: [NOTE, PUB_A] }, 'b2');
    const carol = await listen('beta', 'carol', { resourcesListChanged: true, resourceSubscriptions: [PUB_A] }, 'c2');
    for (const stream of [bob, carol]) await stream.next();
    const before = gateway.app.tenants.status('acme')?.servingRevision;
    // A static source's text is its configuration: a changed entry is a changed resource.
    await gateway.app.controlPlane!.store.putEntity(admin, 'acme', 'source', 'notes', {
      type: 'static',
      resources: [{ uri: NOTE, name: 'n', text: 'N, revised' }],
    });
    await within(
      10_000,
      () => expect(gateway.app.tenants.status('acme')?.servingRevision).not.toBe(before),
      'the source change applied',
    );
    gateway.app.events.publish({ type: 'configuration', tenantId: 'acme' });
    gateway.app.events.publish({ type: 'configuration', tenantId: 'beta' });
    for (const tenantId of ['acme', 'beta']) {
      gateway.app.events.publish({
        type: 'source',
        tenantId,
        sourceId: 'docs',
        change: { type: 'resource-updated', uri: PUB_A },
      });
    }
    const until = async (stream: ListenStream, count: number) => {
      while (stream.messages.length < count) await stream.next();
    };
    await until(bob, 3);
    await until(carol, 2);
    // Only the note's text changed: an update of it, and no list_changed (bob's set did not move).
    expect(bob.messages.slice(1).map(methodAndUri)).toEqual([
      ['notifications/resources/updated', NOTE],
      ['notifications/resources/updated', PUB_A],
    ]);
    expect(carol.messages.slice(1).map(methodAndUri)).toEqual([['notifications/resources/updated', PUB_A]]);
    expectWellFormed(bob, 'b2');
    expectWellFormed(carol, 'c2');
    for (const stream of [bob, carol]) stream.close();
  });
});
