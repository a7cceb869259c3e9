/** A protected resource this server issues tokens for: a tenant's MCP endpoint and the scopes it may carry. */
export interface DevResource {
  /** The tenant's canonical resource URI, `${PUBLIC_URL}/t/{tenant}/mcp` (RFC 8707 §2, RFC 9728). */
  uri: string;
  /** Scopes a token for this resource may be granted. */
  scopes: string[];
}

/**
 * A client known from the start, such as the gateway's admin sign-in for a
 * tenant: public (RFC 6749 section 2.1, `token_endpoint_auth_method` "none",
 * codes bound by PKCE alone) unless it has a secret, then confidential with
 * HTTP Basic (section 2.3.1).
 */
export interface DevClient {
  clientId: string;
  clientSecret?: string;
  redirectUris: string[];
}

/** The configured resources by normalized URI, so `HTTP://127.0.0.1:8080/...` finds `http://127.0.0.1:8080/...`. */
export type ResourceIndex = ReadonlyMap<string, DevResource>;

/**
 * Validates the resources and indexes them. RFC 8707 §2: a resource indicator
 * "MUST be an absolute URI" and "MUST NOT include a fragment component".
 */
export function indexResources(resources: readonly DevResource[]): ResourceIndex {
  const index = new Map<string, DevResource>();
  for (const resource of resources) {
    const key = normalizeResource(resource.uri);
    if (key === undefined) {
      throw new Error(
        `development authorization server: resource ${JSON.stringify(resource.uri)} must be an absolute http(s) URI without a fragment`,
      );
    }
    index.set(key, { uri: resource.uri, scopes: [...new Set(resource.scopes)] });
  }
  return index;
}

/** The key a resource indicator is looked up by; undefined when it cannot name one of ours. */
export function normalizeResource(uri: string): string | undefined {
  if (uri.includes('#')) return undefined;
  const url = URL.parse(uri);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
  return url.href;
}
