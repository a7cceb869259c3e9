import { valueAtPath } from '@mcpgw/core';

/**
 * The value of a claim named in the configuration (`scopeClaim`, `groupsClaim`,
 * the operator role claim). A name is first looked up as it stands, since
 * claim names may contain dots (RFC 7519 section 4.2 registers names like
 * `http://example.com/is_root` as collision-resistant); only when no claim has
 * that name is it read as a dotted path through nested objects, as identity
 * providers nest roles: Keycloak's realm roles are `realm_access.roles`, a
 * client's `resource_access.<client>.roles`.
 */
export function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  return Object.hasOwn(claims, name) ? claims[name] : valueAtPath(claims, name);
}
