import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Principal, Source } from '@mcpgw/core';
import { silentLogger } from '@mcpgw/core';
import type { Grant } from '@mcpgw/policy';
import { compileGrants, resolveAccess } from '@mcpgw/policy';
import type { StreamNotification } from '@mcpgw/protocol';
import { createStaticSource } from '@mcpgw/source-static';
import { oracleAllows } from '@mcpgw/test-helpers/grant-oracle';
import type { TenantEvent } from '@mcpgw/events';
import { createListenStreams, createLocalTenantEventBus, startCallerSubscription } from '@mcpgw/events';
import { acceptListen } from '../src/routes/listen-stream.js';
import type { TenantRuntime } from '@mcpgw/tenancy';

// Property: for random grants, a random caller, random subscriptions and a
// random sequence of tenant events (of this tenant and another one with the
// same source ids: resources coming and going, resources and folders changing,
// a static resource's text edited in the configuration), the acknowledged
// filter and every notification a stream carries are exactly what an
// independent oracle derives from the grants (a recursive glob matcher, not
// the compiled matcher the gateway uses): `list_changed` only when something
// the caller may see came or went, `updated` only for a subscribed URI they
// may see that changed for them. Real policy, real static sources, the real
// bus; the tenant runtime is reduced to the parts a listen stream reads (its
// sources, config and authenticator), which is the only stand-in here.

const TENANT = 'acme';
const SOURCES = ['alpha', 'beta'] as const;
const universe = (source: string) =>
  ['pub', 'priv'].flatMap((dir) => [0, 1].map((i) => `test://${source}/${dir}/${i}`));
/** Folder-like resources of each source, each showing the resources under it. */
const folders = (source: string) => ['pub', 'priv'].map((dir) => `test://${source}/${dir}/`);
const folderOf = (uri: string) => uri.slice(0, uri.lastIndexOf('/') + 1);
const ALL = SOURCES.flatMap((source) => [...universe(source), ...folders(source)]);

/** `edits[uri]`: how many times the configuration's text of `uri` was edited. */
function runtimeFor(grants: Grant[], edits: ReadonlyMap<string, number> = new Map()): TenantRuntime {
  const options = (id: string) => ({
    resources: [...universe(id), ...folders(id)].map((uri) => ({
      uri,
      name: uri,
      text: `${uri} v${edits.get(uri) ?? 0}`,
    })),
    templates: [],
  });
  const sources: Source[] = SOURCES.map((id) =>
    createStaticSource(options(id), { sourceId: id, tenantId: TENANT, configDir: '.', logger: silentLogger }),
  );
  const compiled = compileGrants(grants);
  return {
    config: { id: TENANT, sources: SOURCES.map((id) => ({ id, type: 'static', options: options(id) })) },
    catalog: { sources },
    server: { name: 'gw', version: '1' },
    auth: { accessOf: (principal: Principal) => resolveAccess(TENANT, principal, compiled) },
  } as unknown as TenantRuntime;
}

const oracleSees = (grants: Grant[], who: Principal, uri: string) => {
  const source = SOURCES.find((s) => uri.startsWith(`test://${s}/`));
  return source !== undefined && oracleAllows(grants, who, source, uri);
};

const token = fc.constantFrom('a', 'b');
const grant: fc.Arbitrary<Grant> = fc.record({
  name: fc.constantFrom('g1', 'g2', 'g3'),
  match: fc.record(
    { scopes: fc.array(token, { maxLength: 2 }), subjects: fc.array(token, { maxLength: 1 }) },
    {
      requiredKeys: [],
    },
  ),
  allow: fc.array(
    fc.constantFrom(...SOURCES).chain((source) =>
      fc.record({
        source: fc.constant(source),
        uris: fc.option(
          fc.array(fc.constantFrom(`test://${source}/pub/**`, `test://${source}/*/1`, `test://${source}/priv/0`), {
            minLength: 1,
            maxLength: 2,
          }),
          { nil: undefined },
        ),
      }),
    ),
    { maxLength: 2 },
  ),
});
const principal: fc.Arbitrary<Principal> = fc.record({
  issuer: fc.constant('https://idp'),
  subject: token,
  scopes: fc.array(token, { maxLength: 2 }),
  groups: fc.constant([]),
  expiresAt: fc.constant(Math.floor(Date.now() / 1000) + 3600),
});
/** A step: an event on the bus, or an edit of one static resource's text in the configuration. */
type Step = { readonly publish: TenantEvent } | { readonly edit: string };
const tenantId = fc.constantFrom(TENANT, 'other');
const step: fc.Arbitrary<Step> = fc.oneof(
  // Resources of one source came or went.
  fc.constantFrom(...SOURCES).chain((sourceId) =>
    fc.record({
      publish: fc.record({
        type: fc.constant('source' as const),
        tenantId,
        sourceId: fc.constant(sourceId),
        change: fc.record({
          type: fc.constant('list-changed' as const),
          uris: fc.subarray(universe(sourceId), { minLength: 1 }),
        }),
      }),
    }),
  ),
  // A resource changed.
  fc.constantFrom(...ALL).chain((uri) =>
    fc.record({
      publish: fc.record({
        type: fc.constant('source' as const),
        tenantId,
        sourceId: fc.constant(uri.split('/')[2]!),
        change: fc.constant({ type: 'resource-updated' as const, uri }),
      }),
    }),
  ),
  // A folder reads differently because resources under it changed.
  fc.constantFrom(...SOURCES.flatMap(universe)).chain((member) =>
    fc.record({
      publish: fc.record({
        type: fc.constant('source' as const),
        tenantId,
        sourceId: fc.constant(member.split('/')[2]!),
        change: fc.record({
          type: fc.constant('resource-updated' as const),
          uri: fc.constantFrom(folderOf(member), member),
          because: fc.subarray(universe(member.split('/')[2]!), { minLength: 1 }),
        }),
      }),
    }),
  ),
  fc.record({ edit: fc.constantFrom(...ALL) }),
);

describe('listen streams against an oracle (property)', () => {
  it('acknowledge and deliver exactly what the grants allow, nothing of another tenant', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(grant, { maxLength: 3 }),
        principal,
        fc.boolean(),
        fc.subarray([...ALL, 'test://gamma/pub/0', 'other://x']),
        fc.array(step, { maxLength: 12 }),
        async (grants, who, listChanged, subscriptions, steps) => {
          const runtime = runtimeFor(grants);
          const scope = runtime.auth!.accessOf(who)!;
          const streams = createListenStreams({
            limits: { perPrincipal: 0, perTenant: 0, total: 10 },
            keepAliveMs: 60_000,
          });
          const pending = await acceptListen(
            { id: 1, filter: { resourcesListChanged: listChanged, resourceSubscriptions: subscriptions } },
            { tenant: runtime, scope, principal: who, principalKey: 'p' },
            { streams, bus: createLocalTenantEventBus(silentLogger), tenants: new Map(), listChangedIntervalMs: 0 },
          );
          const visibleSubscriptions = subscriptions.filter((uri) => oracleSees(grants, who, uri));
          expect(pending.honored).toEqual({
            ...(listChanged ? { resourcesListChanged: true } : {}),
            resourceSubscriptions: visibleSubscriptions,
          });

          const bus = createLocalTenantEventBus(silentLogger);
          const tenants = new Map([[TENANT, runtime]]);
          const edits = new Map<string, number>();
          const sent: StreamNotification[] = [];
          const stop = startCallerSubscription({
            id: 1,
            caller: { tenantId: TENANT, principal: who },
            listChanged,
            uris: pending.uris,
            digest: pending.digest,
            reads: pending.reads,
            tenants,
            bus,
            listChangedIntervalMs: 0,
            output: { send: (message) => sent.push(message), complete: () => expect.fail('no completion expected') },
          });
          for (const next of steps) {
            if ('publish' in next) bus.publish(next.publish);
            else {
              // The configuration changes: a new runtime serves, then the configuration event.
              edits.set(next.edit, (edits.get(next.edit) ?? 0) + 1);
              tenants.set(TENANT, runtimeFor(grants, edits));
              bus.publish({ type: 'configuration', tenantId: TENANT });
            }
          }
          stop();
          pending.slot.release();

          const sees = (uri: string) => oracleSees(grants, who, uri);
          const expected = steps.flatMap((next) => {
            // An edited text changes that one resource, and nobody's set.
            if ('edit' in next) return visibleSubscriptions.includes(next.edit) ? [`updated ${next.edit}`] : [];
            const e = next.publish;
            if (e.type !== 'source' || e.tenantId !== TENANT) return [];
            if (e.change.type === 'list-changed')
              return listChanged && e.change.uris.some(sees) ? ['list_changed'] : [];
            if (!visibleSubscriptions.includes(e.change.uri)) return [];
            return e.change.because === undefined || e.change.because.some(sees) ? [`updated ${e.change.uri}`] : [];
          });
          expect(
            sent.map((m) =>
              m.method === 'notifications/resources/updated' ? `updated ${String(m.params.uri)}` : 'list_changed',
            ),
          ).toEqual(expected);
          expect(streams.count()).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('decide one event for many callers of the same and of differing views, each by their own grants', async () => {
    // Every stream of the tenant gets the same event object, and what one view decided is reused by the
    // other streams of that view: callers of another view must still be decided on their own.
    const listChangedStep = step.filter(
      (next) => 'publish' in next && next.publish.type === 'source' && next.publish.change.type === 'list-changed',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(grant, { maxLength: 3 }),
        fc.array(principal, { minLength: 2, maxLength: 6 }),
        fc.array(listChangedStep, { minLength: 1, maxLength: 8 }),
        async (grants, callers, steps) => {
          const runtime = runtimeFor(grants);
          const bus = createLocalTenantEventBus(silentLogger);
          const tenants = new Map([[TENANT, runtime]]);
          const sent = callers.map(() => 0);
          const stops = callers.map((who, i) =>
            startCallerSubscription({
              id: i,
              caller: { tenantId: TENANT, principal: who },
              listChanged: true,
              uris: new Set(),
              digest: '',
              reads: new Map(),
              tenants,
              bus,
              listChangedIntervalMs: 0,
              output: { send: () => (sent[i]! += 1), complete: () => expect.fail('no completion expected') },
            }),
          );
          for (const next of steps) if ('publish' in next) bus.publish(next.publish);
          for (const stop of stops) stop();
          const expected = callers.map(
            (who) =>
              steps.filter(
                (next) =>
                  'publish' in next &&
                  next.publish.type === 'source' &&
                  next.publish.tenantId === TENANT &&
                  next.publish.change.type === 'list-changed' &&
                  next.publish.change.uris.some((uri) => oracleSees(grants, who, uri)),
              ).length,
          );
          expect(sent).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
