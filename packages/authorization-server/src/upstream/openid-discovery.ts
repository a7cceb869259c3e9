import { fetchBoundedJson, jsonObject } from './bounded-json-fetch.js';
import { UpstreamSignInError } from './upstream-sign-in-error.js';

/** Discovery documents are small; Entra's and Keycloak's are a few KiB. */
const MAX_DISCOVERY_BYTES = 256 * 1024;
/** A read document is used this long before it is read again. */
export const DISCOVERY_FRESH_MS = 10 * 60_000;
/** After a failed read, sign-ins fail at once for this long rather than each waiting on a provider that is down. */
export const DISCOVERY_RETRY_MS = 5_000;

/** The upstream's endpoints, as a sign-in uses them. */
export interface UpstreamEndpoints {
  readonly authorization: string;
  readonly token: string;
  readonly jwks: string;
  /** OpenID Connect Core 1.0 section 5.3; absent: claims come from the ID token alone. */
  readonly userinfo?: string | undefined;
  /** RFC 9207 section 3: the provider puts `iss` in its authorization responses. */
  readonly issuerInResponse: boolean;
  /** `id_token_signing_alg_values_supported` (Discovery 1.0 section 3), when listed. */
  readonly idTokenAlgorithms?: readonly string[] | undefined;
}

/** Where an upstream's endpoints come from: its settings (`endpoints`) or its OpenID discovery document. */
export interface EndpointSettings {
  readonly issuer: string;
  readonly endpoints?: { readonly authorization: string; readonly token: string; readonly jwks: string } | undefined;
}

/**
 * OpenID Connect Discovery 1.0 section 4: the document is at the issuer with
 * `/.well-known/openid-configuration` appended (a trailing `/` of the issuer
 * removed first). Only this one: the upstream is an OpenID Connect provider,
 * and many (Entra ID) publish no RFC 8414 document.
 */
export function openIdConfigurationUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/**
 * The upstream's endpoints, read once and then kept for
 * {@link DISCOVERY_FRESH_MS}; concurrent sign-ins share one read. A failed
 * refresh keeps the last good document; without one, it fails every call for
 * {@link DISCOVERY_RETRY_MS}. With `endpoints` in the settings nothing is
 * fetched.
 */
export function cachedUpstreamEndpoints(
  settings: EndpointSettings,
  fetcher: typeof fetch,
  now: () => number,
): () => Promise<UpstreamEndpoints> {
  if (settings.endpoints !== undefined) {
    const fixed: UpstreamEndpoints = { ...settings.endpoints, issuerInResponse: false };
    return () => Promise.resolve(fixed);
  }
  let known: { endpoints: UpstreamEndpoints; readAt: number } | undefined;
  let failed: { error: unknown; at: number } | undefined;
  let reading: Promise<UpstreamEndpoints> | undefined;
  return async () => {
    const at = now();
    if (known !== undefined && at - known.readAt < DISCOVERY_FRESH_MS) return known.endpoints;
    if (known === undefined && failed !== undefined && at - failed.at < DISCOVERY_RETRY_MS) throw failed.error;
    reading ??= discoverUpstreamEndpoints(settings.issuer, fetcher)
      .then((endpoints) => {
        known = { endpoints, readAt: now() };
        failed = undefined;
        return endpoints;
      })
      .catch((error: unknown) => {
        failed = { error, at: now() };
        if (known === undefined) throw error;
        // Stale if error: the last good document serves, and is read again only after the retry delay.
        known = { endpoints: known.endpoints, readAt: now() - DISCOVERY_FRESH_MS + DISCOVERY_RETRY_MS };
        return known.endpoints;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
}

/**
 * Reads and checks the discovery document: `issuer` must equal the
 * configured issuer exactly (Discovery 1.0 section 4.3: otherwise "the data
 * contained in the response MUST NOT be used"), the endpoints must be https
 * (http only on loopback, for development and tests), and a provider that
 * lists its PKCE methods must list S256 (RFC 7636 section 4.2).
 */
export async function discoverUpstreamEndpoints(issuer: string, fetcher: typeof fetch): Promise<UpstreamEndpoints> {
  const url = openIdConfigurationUrl(issuer);
  const { status, body } = await fetchBoundedJson(
    url,
    { method: 'GET' },
    { fetch: fetcher, maxBytes: MAX_DISCOVERY_BYTES, what: 'discovery document' },
  );
  const misconfigured = (detail: string) =>
    new UpstreamSignInError(
      'upstream_misconfigured',
      "The identity provider's OpenID Connect configuration cannot be used; the tenant's administrator must check it.",
      `${url}: ${detail}`,
    );
  if (status >= 500) {
    throw new UpstreamSignInError(
      'upstream_unreachable',
      'The identity provider could not be reached. Try again later.',
      `${url}: HTTP ${status}`,
    );
  }
  if (status !== 200) throw misconfigured(`HTTP ${status}`);
  const metadata = jsonObject(body);
  if (metadata === undefined) throw misconfigured('not a JSON object');
  if (metadata.issuer !== issuer) throw misconfigured(`"issuer" is ${JSON.stringify(metadata.issuer)}, not ${issuer}`);
  const endpoint = (name: string, required: boolean): string | undefined => {
    const value = metadata[name];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || !isHttpsOrLoopback(value))
      throw misconfigured(`"${name}" is missing or not https`);
    return value;
  };
  const methods = metadata.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) {
    throw misconfigured('code_challenge_methods_supported does not list S256');
  }
  const algorithms = metadata.id_token_signing_alg_values_supported;
  return {
    authorization: endpoint('authorization_endpoint', true)!,
    token: endpoint('token_endpoint', true)!,
    jwks: endpoint('jwks_uri', true)!,
    userinfo: endpoint('userinfo_endpoint', false),
    issuerInResponse: metadata.authorization_response_iss_parameter_supported === true,
    idTokenAlgorithms:
      Array.isArray(algorithms) && algorithms.every((alg) => typeof alg === 'string') ? algorithms : undefined,
  };
}

/** https, or http on a loopback name: the configuration schema's rule for upstream URLs. */
export function isHttpsOrLoopback(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}
