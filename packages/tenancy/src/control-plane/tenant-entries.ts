import type { StoredTenantModel } from '@mcpgw/control-plane';

/**
 * Which of a tenant's sources (by id) and issuers (by `issuer`, or
 * `development`) a tenant admin wrote last, and whether one wrote its
 * authorization server settings (its upstream and enterprise assertion
 * issuers): their outbound connections are held to the egress policy
 * (docs/configuration.md, "Egress policy").
 */
export interface TenantAdminWrites {
  readonly sources: ReadonlySet<string>;
  readonly issuers: ReadonlySet<string>;
  readonly authorizationServer?: boolean;
}

/** What a stored tenant's runtime is placed by: its revision, and what its tenant admins wrote. */
export function tenantAdminWritesOf(tenant: StoredTenantModel): TenantAdminWrites {
  const byTenantAdmin = (parts: StoredTenantModel['issuers']) =>
    new Set(parts.filter((part) => part.writtenBy === 'tenant-admin').map((part) => part.name));
  return {
    sources: byTenantAdmin(tenant.sources),
    issuers: byTenantAdmin(tenant.issuers),
    authorizationServer: tenant.authorizationServer?.writtenBy === 'tenant-admin',
  };
}
