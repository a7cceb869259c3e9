import { sealedCredentialKeys } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeclaredTenant } from '../src/apply-declared-state.js';
import type { WriteContext } from '../src/write-context.js';
import { applyDeclaredState } from '../src/apply-declared-state.js';
import { createControlPlaneStore } from '../src/control-plane-store.js';
import { MIGRATIONS } from '../src/migrations/index.js';
import { createSecretBox } from '../src/secret-box.js';
import { migrate } from '../src/migrate.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// Replicas of one deployment start at the same moment against one empty
// Postgres database, each migrating it and applying the same bootstrap file:
// every one must come up, and the database must hold the declaration once.

vi.setConfig({ testTimeout: 60_000 });

const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const file: WriteContext = { actor: { kind: 'bootstrap', subject: '/etc/gateway.yaml' } };
const REPLICAS = 3;
const ROUNDS = 4;

const declared = (id: string): DeclaredTenant => ({
  id,
  document: { name: id },
  entities: {
    issuer: [{ name: `https://idp.${id}.example`, document: { issuer: `https://idp.${id}.example` } }],
    source: [
      { name: 'notes', document: { type: 'static', resources: [] } },
      { name: 'more', document: { type: 'static', resources: [] } },
    ],
    grant: [{ name: 'everyone', document: { match: {}, allow: [{ source: 'notes' }] } }],
    'admin-role-binding': [{ name: 'admins', document: { scopes: ['gateway:admin'] } }],
  },
});
const TENANTS = [declared('acme'), declared('globex')];

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])(
  'one replica applying twice at once on %s',
  (engine) => {
    let under: EngineUnderTest | undefined;
    afterEach(async () => {
      await under?.dispose();
      under = undefined;
    });

    it('finishes both (two reloads in a row), writing the declaration once', async () => {
      under = await ENGINES[engine]();
      await migrate(under.db);
      const store = createControlPlaneStore({ db: under.db, secrets: box });
      const [first, second] = await Promise.all([
        applyDeclaredState(store, TENANTS, file),
        applyDeclaredState(store, TENANTS, file),
      ]);
      expect(first.changes).toHaveLength(TENANTS.length * 6);
      expect(second.changes).toEqual([]);
    });
  },
);

describe('replicas starting together on an empty Postgres database', () => {
  let under: EngineUnderTest | undefined;
  afterEach(async () => {
    await under?.dispose();
    under = undefined;
  });

  it.each(Array.from({ length: ROUNDS }, (_, round) => round + 1))(
    'all come up, and the declaration is written once (round %i)',
    async () => {
      under = await ENGINES.postgres();
      const replicas = Array.from({ length: REPLICAS }, () => under!.connectAgain!());
      const outcomes = await Promise.allSettled(
        replicas.map(async (db) => {
          const migrated = await migrate(db);
          const store = createControlPlaneStore({ db, secrets: box });
          return { migrated, applied: await applyDeclaredState(store, TENANTS, file) };
        }),
      );
      const reasons = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
      expect(reasons).toEqual([]);
      const results = outcomes.map((outcome) => (outcome as PromiseFulfilledResult<never>).value) as {
        migrated: { applied: number[] };
        applied: { changes: string[] };
      }[];

      // One replica migrated and applied; the others found nothing left to do.
      expect(results.map((result) => result.migrated.applied.length).sort()).toEqual([
        ...Array.from({ length: REPLICAS - 1 }, () => 0),
        MIGRATIONS.length,
      ]);
      const changes = results.flatMap((result) => result.applied.changes);
      expect(changes.toSorted()).toEqual(
        TENANTS.flatMap((tenant) => [
          `create tenant ${tenant.id}`,
          ...Object.entries(tenant.entities).flatMap(([kind, items]) =>
            items.map((item) => `create ${kind} ${tenant.id}/${item.name}`),
          ),
        ]).toSorted(),
      );

      const store = createControlPlaneStore({ db: under.db, secrets: box });
      for (const tenant of TENANTS) {
        expect(await store.getTenant(tenant.id)).toMatchObject({ document: tenant.document, managedBy: 'bootstrap' });
        for (const [kind, items] of Object.entries(tenant.entities)) {
          const stored = await store.listEntities(tenant.id, kind as keyof DeclaredTenant['entities']);
          expect(stored.map((entity) => [entity.name, entity.document, entity.version])).toEqual(
            items.map((item) => [item.name, item.document, 1]),
          );
        }
        // Each write audited once: no replica wrote what another had written.
        expect(await store.auditEvents(tenant.id, { limit: 200 })).toHaveLength(1 + 5);
      }
      // Applied again by any replica: nothing differs.
      expect((await applyDeclaredState(store, TENANTS, file)).changes).toEqual([]);
    },
  );
});
