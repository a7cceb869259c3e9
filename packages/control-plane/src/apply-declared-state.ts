import type { ControlPlaneStore, Document, TenantEntityKind } from './control-plane-store.js';
import { writerOf } from './entity-rows.js';
import type { WriteContext } from './write-context.js';

/** One entity as a declaration states it. */
export interface DeclaredEntity {
  readonly name: string;
  readonly document: Document;
}

/** A tenant as a declarative source (the bootstrap file) states it. */
export interface DeclaredTenant {
  readonly id: string;
  readonly document: Document;
  /** Each kind's entities by name; the authorization server (a singleton) is at most one, absent: none. */
  readonly entities: Readonly<
    Record<Exclude<TenantEntityKind, 'authorization-server'>, readonly DeclaredEntity[]> &
      Partial<Record<'authorization-server', readonly DeclaredEntity[]>>
  >;
  /**
   * Delete what this tenant owns in the store but the declaration does not
   * mention. Off by default: the file never deletes what it does not mention
   * unless it says so.
   */
  readonly prune?: boolean;
}

export interface ApplyReport {
  /** One line per write made, e.g. `update grant acme/finance`; empty when nothing changed. */
  readonly changes: readonly string[];
}

const KINDS: readonly TenantEntityKind[] = ['issuer', 'source', 'grant', 'admin-role-binding', 'authorization-server'];

/** Key order does not matter to jsonb; compare documents in one canonical form. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const same = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b);

/**
 * Makes the store say what the declaration says, writing only what differs:
 * applied twice, the second run writes nothing (no version bump, no audit
 * event, no change signal). What the declaration states wins over what an
 * admin wrote through the API for the same names; a tenant it declares is
 * marked `managedBy: bootstrap`. Each tenant is applied in one transaction
 * (every write audited): a write that fails leaves that tenant as it was.
 * Applies run one at a time across replicas ({@link ControlPlaneStore.exclusively}):
 * replicas starting together on an empty database with the same file each
 * come up, the first writing the declaration and the others finding nothing
 * left to do, instead of racing to create the same rows.
 */
export async function applyDeclaredState(
  store: ControlPlaneStore,
  tenants: readonly DeclaredTenant[],
  context: WriteContext,
): Promise<ApplyReport> {
  return store.exclusively(() => applyEach(store, tenants, context));
}

async function applyEach(
  store: ControlPlaneStore,
  tenants: readonly DeclaredTenant[],
  context: WriteContext,
): Promise<ApplyReport> {
  const changes: string[] = [];
  for (const declared of tenants) {
    changes.push(...(await store.inOneTransaction((tenantStore) => applyTenant(tenantStore, declared, context))));
  }
  return { changes };
}

/** One declared tenant's writes, through a store whose writes share one transaction. */
async function applyTenant(
  store: ControlPlaneStore,
  declared: DeclaredTenant,
  context: WriteContext,
): Promise<string[]> {
  const changes: string[] = [];
  const current = await store.getTenant(declared.id);
  if (current === undefined) {
    await store.createTenant(context, declared.id, { document: declared.document, managedBy: 'bootstrap' });
    changes.push(`create tenant ${declared.id}`);
  } else if (!same(current.document, declared.document) || current.managedBy !== 'bootstrap') {
    await store.updateTenant(
      context,
      declared.id,
      { document: declared.document, managedBy: 'bootstrap' },
      { ifVersion: current.version },
    );
    changes.push(`update tenant ${declared.id}`);
  }
  for (const kind of KINDS) {
    const stored = new Map((await store.listEntities(declared.id, kind)).map((entity) => [entity.name, entity]));
    for (const { name, document } of declared.entities[kind] ?? []) {
      const existing = stored.get(name);
      stored.delete(name);
      // An entry a tenant admin last wrote is written again, so the file's owner (an operator) owns it.
      if (existing !== undefined && same(existing.document, document) && existing.writtenBy === writerOf(context)) {
        continue;
      }
      await store.putEntity(context, declared.id, kind, name, document, {
        ...(existing === undefined ? { create: true } : { ifVersion: existing.version }),
      });
      changes.push(`${existing === undefined ? 'create' : 'update'} ${kind} ${declared.id}/${name}`);
    }
    if (declared.prune !== true) continue;
    for (const leftover of stored.values()) {
      await store.deleteEntity(context, declared.id, kind, leftover.name, { ifVersion: leftover.version });
      changes.push(`delete ${kind} ${declared.id}/${leftover.name}`);
    }
  }
  return changes;
}
