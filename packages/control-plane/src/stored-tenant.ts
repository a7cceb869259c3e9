import type { EntityWriter, TenantEntityKind } from './entity-rows.js';
import type { Document } from './tenant-rows.js';
import type { ControlPlaneReads } from './write-check.js';

/** One named entity of a tenant: its stored document and who wrote it last. */
export interface StoredPart {
  readonly name: string;
  readonly document: Document;
  readonly writtenBy: EntityWriter;
}

/** A source as stored: its document and its sealed credentials, opened. */
export interface StoredSourcePart extends StoredPart {
  /** Holds credentials: never for a response or a log line. */
  readonly secrets: Readonly<Record<string, string>>;
}

/** The tenant's authorization server settings as stored: the document and its sealed client secret, opened. */
export interface StoredAuthorizationServerPart extends StoredPart {
  /** `upstream.clientSecret`, when one is sealed. Holds credentials: never for a response or a log line. */
  readonly secrets: Readonly<Record<string, string>>;
}

/**
 * A tenant as the control plane holds it, whole: its own settings and each
 * kind of entity it owns, in the order they were added. The bootstrap file
 * and the admin API write it; `servedTenantEntry` is the one way from it to
 * what a replica serves.
 */
export interface StoredTenantModel {
  readonly id: string;
  readonly status: 'active' | 'suspended';
  readonly revision: number;
  readonly settings: Document;
  readonly issuers: readonly StoredPart[];
  readonly sources: readonly StoredSourcePart[];
  readonly grants: readonly StoredPart[];
  readonly adminRoleBindings: readonly StoredPart[];
  /** Its hosted authorization server settings; absent: it has none. */
  readonly authorizationServer?: StoredAuthorizationServerPart | undefined;
}

const part = (entity: { name: string; document: Document; writtenBy: EntityWriter }): StoredPart => ({
  name: entity.name,
  document: entity.document,
  writtenBy: entity.writtenBy,
});

/**
 * Reads a whole tenant through `reads`: the store, or a write's transaction
 * (then it is the tenant that write commits). One read at a time: inside a
 * transaction they share its one connection, which runs a query at a time
 * anyway (node-postgres deprecates queueing them on it). Undefined when the
 * tenant does not exist.
 */
export async function readStoredTenant(
  reads: ControlPlaneReads,
  tenantId: string,
): Promise<StoredTenantModel | undefined> {
  const tenant = await reads.getTenant(tenantId);
  if (tenant === undefined) return undefined;
  const list = async (kind: TenantEntityKind) => (await reads.listEntities(tenantId, kind)).map(part);
  const issuers = await list('issuer');
  const sources: StoredSourcePart[] = [];
  for (const source of await reads.listEntities(tenantId, 'source')) {
    const secrets = source.secretNames.length === 0 ? {} : await reads.openSourceSecrets(tenantId, source.name);
    sources.push({ ...part(source), secrets });
  }
  const grants = await list('grant');
  const adminRoleBindings = await list('admin-role-binding');
  const [server] = await reads.listEntities(tenantId, 'authorization-server');
  const authorizationServer =
    server === undefined
      ? undefined
      : {
          ...part(server),
          secrets: server.secretNames.length === 0 ? {} : await reads.openAuthorizationServerSecrets(tenantId),
        };
  return {
    id: tenant.id,
    status: tenant.status,
    revision: tenant.revision,
    settings: tenant.document,
    issuers,
    sources,
    grants,
    adminRoleBindings,
    ...(authorizationServer === undefined ? {} : { authorizationServer }),
  };
}
