import type { ControlPlaneStore, DeclaredTenant, Document, StoredEntity } from '@mcpgw/control-plane';
import type { SourceFactory } from '@mcpgw/core';

/**
 * The control plane keeps each tenant as the bootstrap file's pieces: the
 * tenant's own settings, and its issuers, sources and grants as separate
 * documents (so an admin can change one grant without rewriting the tenant).
 * These two functions take a file's tenant apart and put a stored one back
 * together in the file's shape, which `validateTenant` then checks by the
 * same rules as the file.
 */

const asDocument = (value: unknown): Document =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Document) : {};

const asList = (value: unknown): Document[] => (Array.isArray(value) ? value.map(asDocument) : []);

/** A file's tenant (as written, `$env` references kept) as the control plane stores it. */
export function declaredTenantFromEntry(entry: Document): DeclaredTenant {
  const { id, grants, sources, auth, adminRoleBindings, ...settings } = entry;
  const { issuers, ...authSettings } = asDocument(auth);
  return {
    id: String(id),
    document: { ...settings, ...(auth === undefined ? {} : { auth: authSettings }) },
    entities: {
      issuer: asList(issuers).map((issuer) => ({
        name: issuer.development === true ? 'development' : String(issuer.issuer),
        document: issuer,
      })),
      source: asList(sources).map(({ id: sourceId, ...document }) => ({ name: String(sourceId), document })),
      grant: asList(grants).map(({ name, ...document }) => ({ name: String(name), document })),
      'admin-role-binding': asList(adminRoleBindings).map(({ name, ...document }) => ({
        name: String(name),
        document,
      })),
    },
  };
}

/** Keys that would reach an object's prototype rather than the object. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Sets `value` at a dotted path of `target` ("credentials.secretAccessKey"),
 * copying objects on the way (the input is never changed through them):
 * sealed credentials are stored flat and land wherever the source type's
 * options expect them. Own data properties only, never a prototype.
 */
export function setPath(target: Document, path: string, value: string): void {
  const keys = path.split('.');
  if (keys.some((key) => PROTOTYPE_KEYS.has(key))) throw new Error('not an option path');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const child = Object.hasOwn(node, key) ? node[key] : undefined;
    node[key] = child !== null && typeof child === 'object' && !Array.isArray(child) ? { ...(child as Document) } : {};
    node = node[key] as Document;
  }
  node[keys.at(-1) as string] = value;
}

/**
 * The credentials among `secrets` that a source of `type` may be given:
 * those at its declared credential paths. Others (stored before the model
 * bound them, or for another type) are never merged into what is served.
 */
export function credentialsOf(
  registry: ReadonlyMap<string, SourceFactory>,
  type: unknown,
  secrets: Readonly<Record<string, string>>,
): Record<string, string> {
  const declared = new Set(registry.get(String(type))?.model.credentials ?? []);
  return Object.fromEntries(Object.entries(secrets).filter(([path]) => declared.has(path)));
}

/**
 * A source as the gateway serves it, in the bootstrap file's shape: its
 * stored document with its sealed credentials merged in at the paths its
 * type declares as credentials (and nowhere else: a credential never changes
 * the type or any other option). Holds credentials: never for a response or
 * a log line.
 */
export function servedSourceEntry(
  registry: ReadonlyMap<string, SourceFactory>,
  name: string,
  document: Document,
  secrets: Readonly<Record<string, string>>,
): Document {
  const { id: _written, ...options } = document;
  const entry: Document = { id: name, ...options };
  for (const [path, value] of Object.entries(credentialsOf(registry, document.type, secrets))) {
    setPath(entry, path, value);
  }
  return entry;
}

/**
 * Which of a tenant's sources (by id) and issuers (by `issuer`, or
 * `development`) a tenant admin wrote last: their outbound connections are
 * held to the egress policy (docs/configuration.md, "Egress policy").
 */
export interface TenantAdminWrites {
  readonly sources: ReadonlySet<string>;
  readonly issuers: ReadonlySet<string>;
}

export interface StoredTenantEntry {
  readonly entry: Document;
  readonly revision: number;
  readonly tenantAdminWrites: TenantAdminWrites;
}

/**
 * A stored tenant in the bootstrap file's shape, its sources' credentials
 * opened and merged in; undefined when the tenant does not exist or is
 * suspended (neither is served).
 */
export async function loadTenantEntry(
  store: ControlPlaneStore,
  registry: ReadonlyMap<string, SourceFactory>,
  tenantId: string,
): Promise<StoredTenantEntry | undefined> {
  const tenant = await store.getTenant(tenantId);
  if (tenant === undefined || tenant.status !== 'active') return undefined;
  const [issuers, sources, grants] = await Promise.all([
    store.listEntities(tenantId, 'issuer'),
    store.listEntities(tenantId, 'source'),
    store.listEntities(tenantId, 'grant'),
  ]);
  const sourceEntries = await Promise.all(
    sources.map(async (source) =>
      servedSourceEntry(
        registry,
        source.name,
        source.document,
        source.secretNames.length === 0 ? {} : await store.openSourceSecrets(tenantId, source.name),
      ),
    ),
  );
  const { auth, ...settings } = tenant.document;
  const entry: Document = {
    id: tenantId,
    ...settings,
    grants: grants.map((grant) => ({ name: grant.name, ...grant.document })),
    sources: sourceEntries,
  };
  if (auth !== undefined || issuers.length > 0) {
    entry.auth = { ...asDocument(auth), issuers: issuers.map((issuer) => issuer.document) };
  }
  const byTenantAdmin = (entities: readonly StoredEntity[]) =>
    new Set(entities.filter((entity) => entity.writtenBy === 'tenant-admin').map((entity) => entity.name));
  return {
    entry,
    revision: tenant.revision,
    tenantAdminWrites: { sources: byTenantAdmin(sources), issuers: byTenantAdmin(issuers) },
  };
}
