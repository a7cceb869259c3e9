/**
 * The admin API's OAuth protected resources (RFC 8707 section 2, RFC 9068
 * section 3: a token's `aud` names the resource it is for). Each tenant's
 * admin surface is a resource of its own, distinct from the tenant's MCP
 * endpoint, so a token minted for reading resources can never administer the
 * tenant, and one tenant's admin token names the only tenant it serves.
 */

export const ADMIN_PREFIX = '/admin/v1';

/** The resource a tenant admin's token must name in `aud`. */
export const tenantAdminResource = (base: string, tenantId: string): string =>
  `${base}${ADMIN_PREFIX}/tenants/${tenantId}`;

/** The default resource of operator tokens (OPERATOR_AUDIENCE overrides it). */
export const operatorResource = (base: string): string => `${base}${ADMIN_PREFIX}`;

/**
 * RFC 9728 section 3.1: the metadata of a resource with a path lives at the
 * well-known prefix followed by that path.
 */
export const adminResourceMetadataUrl = (base: string, resource: string): string =>
  `${base}/.well-known/oauth-protected-resource${new URL(resource).pathname}`;

/** The tenant an admin resource URI names, when it is one under `bases`. */
export function tenantOfAdminResource(audience: string, bases: readonly string[]): string | undefined {
  for (const base of bases) {
    const prefix = `${base}${ADMIN_PREFIX}/tenants/`;
    if (!audience.startsWith(prefix)) continue;
    const id = audience.slice(prefix.length);
    if (/^[a-z0-9-]{1,63}$/.test(id)) return id;
  }
  return undefined;
}
