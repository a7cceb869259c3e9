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
 * An issuer's discovery metadata, from the first of its well-known URLs that
 * answers. The document's `issuer` must equal the configured one exactly
 * (RFC 8414 section 3.3, OpenID Connect Discovery 1.0 section 4.3: otherwise
 * "the data contained in the response MUST NOT be used"), and every endpoint
 * URL named in `endpoints` must be https (http only on loopback, for local
 * development and tests), so a tampered document cannot point key fetches or
 * sign-ins at an attacker.
 */
export async function discoverIssuerMetadata<K extends string>(
  issuer: string,
  endpoints: readonly K[],
  options: Omit<BoundedFetchOptions, 'maxBytes'>,
): Promise<Record<string, unknown> & Record<K, string>> {
  const failures: string[] = [];
  for (const url of discoveryUrls(issuer)) {
    try {
      const { status, body } = await fetchJson(url, { method: 'GET' }, { ...options, maxBytes: MAX_METADATA_BYTES });
      if (status !== 200) throw new UpstreamError(`HTTP ${status}`);
      if (typeof body !== 'object' || body === null) throw new UpstreamError('metadata is not a JSON object');
      const metadata = body as Record<string, unknown>;
      if (metadata.issuer !== issuer) throw new UpstreamError('metadata "issuer" differs from the configured issuer');
      for (const name of endpoints) {
        const value = metadata[name];
        if (typeof value !== 'string' || !isHttpsOrLoopback(value)) {
          throw new UpstreamError(`metadata "${name}" is missing or not an https URL`);
        }
      }
      return metadata as Record<string, unknown> & Record<K, string>;
    } catch (error) {
      failures.push(`${url}: ${error instanceof Error ? error.message : 'failed'}`);
    }
  }
  throw new UpstreamError(`discovery failed (${failures.join('; ')})`);
}

/** The `jwks_uri` from an issuer's discovery metadata (see discoverIssuerMetadata). */
export async function discoverJwksUri(issuer: string, options: Omit<BoundedFetchOptions, 'maxBytes'>): Promise<string> {
  return (await discoverIssuerMetadata(issuer, ['jwks_uri'], options)).jwks_uri;
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
