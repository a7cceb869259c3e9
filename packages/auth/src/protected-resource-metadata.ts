/** Input for a tenant's RFC 9728 protected resource metadata document. */
export interface ProtectedResourceMetadataInput {
  /** The tenant's canonical resource URI (RFC 8707 section 2), exactly. */
  readonly resource: string;
  /** Issuer identifiers of the tenant's authorization servers. */
  readonly authorizationServers: readonly string[];
  readonly scopesSupported: readonly string[];
  readonly resourceName?: string | undefined;
}

/**
 * The RFC 9728 section 2 document served at
 * `/.well-known/oauth-protected-resource/t/{tenant}/mcp`. Bearer tokens are
 * accepted in the header only (MCP authorization, "Token Requirements").
 * `offline_access` is left out of `scopes_supported` (MCP authorization,
 * "Refresh Tokens": refresh tokens are not a resource requirement), and an
 * empty list is omitted rather than advertised.
 */
export function protectedResourceMetadata(input: ProtectedResourceMetadataInput): Record<string, unknown> {
  const scopes = input.scopesSupported.filter((scope) => scope !== 'offline_access');
  return {
    resource: input.resource,
    authorization_servers: [...input.authorizationServers],
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
    bearer_methods_supported: ['header'],
    ...(input.resourceName !== undefined ? { resource_name: input.resourceName } : {}),
  };
}
