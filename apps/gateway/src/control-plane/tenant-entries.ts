import type { ControlPlaneStore, DeclaredTenant, Document, StoredEntity } from '@mcpgw/control-plane';

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

/**
 * Sets `value` at a dotted path of `target` ("credentials.secretAccessKey"),
 * creating objects on the way: sealed credentials are stored flat and land
 * wherever the source type's options expect them.
 */
export function setPath(target: Document, path: string, value: string): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const child = node[key];
    node[key] = child !== null && typeof child === 'object' && !Array.isArray(child) ? { ...(child as Document) } : {};
    node = node[key] as Document;
  }
  node[keys.at(-1) as string] = value;
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
    sources.map(async (source) => {
      const entry: Document = { id: source.name, ...source.document };
      if (source.secretNames.length === 0) return entry;
      const secrets = await store.openSourceSecrets(tenantId, source.name);
      for (const [path, value] of Object.entries(secrets)) setPath(entry, path, value);
      return entry;
    }),
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
