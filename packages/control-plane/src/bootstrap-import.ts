import type { DeclaredTenant } from './apply-declared-state.js';
import { AUTHORIZATION_SERVER_NAME } from './entity-rows.js';
import type { StoredPart, StoredTenantModel } from './stored-tenant.js';
import type { Document } from './tenant-rows.js';

const asDocument = (value: unknown): Document =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Document) : {};

const asList = (value: unknown): Document[] => (Array.isArray(value) ? value.map(asDocument) : []);

/**
 * The bootstrap file's importer: one of its tenants (as written, `$env`
 * references kept, already validated whole by the file's rules) taken apart
 * into the tenant model's parts, the tenant's own settings and each entity
 * by its name (its hosted authorization server the one entity of its kind), as the admin API stores them one write at a time (so an admin
 * can change one grant without rewriting the tenant). The file is an
 * operator's: every field of the model is its to set.
 */
export function declaredTenantFromEntry(entry: Document): DeclaredTenant {
  const { id, grants, sources, auth, adminRoleBindings, authorizationServer, ...settings } = entry;
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
      // A singleton: the file's `authorizationServer`, its client secret an `$env` reference kept as written.
      'authorization-server':
        authorizationServer === undefined
          ? []
          : [{ name: AUTHORIZATION_SERVER_NAME, document: asDocument(authorizationServer) }],
    },
  };
}

/**
 * A declared tenant as the model holds it, without a store: what a gateway
 * serving the bootstrap file alone builds its runtimes from, through the same
 * servedTenantEntry as a stored one. Everything in it is an operator's; its
 * credentials are the file's own (`$env` references), none sealed.
 */
export function storedTenantOfDeclared(declared: DeclaredTenant): StoredTenantModel {
  const parts = (kind: keyof DeclaredTenant['entities']) =>
    (declared.entities[kind] ?? []).map(({ name, document }) => ({ name, document, writtenBy: 'operator' as const }));
  return {
    id: declared.id,
    status: 'active',
    revision: 0,
    settings: declared.document,
    issuers: parts('issuer'),
    sources: parts('source').map((source) => ({ ...source, secrets: {} })),
    grants: parts('grant'),
    adminRoleBindings: parts('admin-role-binding'),
    ...((declared.entities['authorization-server'] ?? []).length === 0
      ? {}
      : { authorizationServer: { ...(parts('authorization-server')[0] as StoredPart), secrets: {} } }),
  };
}
