import { fetchJson, UpstreamError, type BoundedFetchOptions } from './bounded-fetch.js';

const MAX_METADATA_BYTES = 256 * 1024;

/**
 * Where an issuer publishes its metadata, in the order tried: RFC 8414
 * section 3.1 (the well-known segment goes between the host and the issuer's
 * path, "any terminating / MUST be removed"), then OpenID Connect Discovery
 * 1.0 section 4 (appended to the issuer, without its trailing slash).
 */
export function discoveryUrls(issuer: string): [string, string] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const oauth = `${url.origin}/.well-known/oauth-authorization-server${path}`;
  const oidc = `${url.origin}${path}/.well-known/openid-configuration`;
  return [oauth, oidc];
}

/**
 * The `jwks_uri` from an issuer's discovery metadata. The document's `issuer`
 * must equal the configured one exactly (RFC 8414 section 3.3: otherwise
 * "the data contained in the response MUST NOT be used"), and the key URL must
 * be https (http only on loopback, for local development and tests), so a
 * tampered document cannot point key fetches at an attacker.
 */
export async function discoverJwksUri(issuer: string, options: Omit<BoundedFetchOptions, 'maxBytes'>): Promise<string> {
  const failures: string[] = [];
  for (const url of discoveryUrls(issuer)) {
    try {
      const { status, body } = await fetchJson(url, { method: 'GET' }, { ...options, maxBytes: MAX_METADATA_BYTES });
      if (status !== 200) throw new UpstreamError(`HTTP ${status}`);
      if (typeof body !== 'object' || body === null) throw new UpstreamError('metadata is not a JSON object');
      const metadata = body as Record<string, unknown>;
      if (metadata.issuer !== issuer) throw new UpstreamError('metadata "issuer" differs from the configured issuer');
      const jwksUri = metadata.jwks_uri;
      if (typeof jwksUri !== 'string' || !isHttpsOrLoopback(jwksUri)) {
        throw new UpstreamError('metadata "jwks_uri" is missing or not an https URL');
      }
      return jwksUri;
    } catch (error) {
      failures.push(`${url}: ${error instanceof Error ? error.message : 'failed'}`);
    }
  }
  throw new UpstreamError(`discovery failed (${failures.join('; ')})`);
}

function isHttpsOrLoopback(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}
