/**
 * Loopback IP literals whose redirect URIs may vary their port (RFC 8252
 * section 7.3). Not `localhost`: section 8.3 recommends the IP literal, since
 * the name may resolve elsewhere (a hosts file, a resolver), and it is
 * matched exactly like any other host.
 */
const LOOPBACK_IP_HOSTS = new Set(['127.0.0.1', '[::1]']);

/** Plain http is accepted for these hosts only: the response never leaves the machine (RFC 8252 section 8.3). */
const LOOPBACK_HOSTS = new Set([...LOOPBACK_IP_HOSTS, 'localhost']);

/**
 * Schemes that are never a private-use redirect scheme (RFC 8252 section
 * 7.1): they run script, read local files or reach the network themselves.
 */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'vbscript:',
  'file:',
  'blob:',
  'about:',
  'ftp:',
  'ws:',
  'wss:',
]);

/** The `application_type` (OpenID Connect Dynamic Client Registration 1.0 section 2) a client registered; `web` by default. */
export type ApplicationType = 'web' | 'native';

/**
 * Why `uri` is refused as a redirect URI of a client registered here
 * (RFC 7591) or described by a metadata document, or undefined when it is
 * accepted:
 * - https anywhere;
 * - http on a loopback host only (127.0.0.1, [::1], localhost: RFC 8252
 *   section 7.3 and 8.3);
 * - a private-use scheme (RFC 8252 section 7.1, e.g. `com.example.app:/cb`)
 *   for a `native` client only: desktop MCP clients return to themselves
 *   that way, and the consent page names the client, while a web client has
 *   no business with one;
 * - never a fragment (RFC 6749 section 3.1.2), nor a `*` anywhere: there
 *   are no wildcards, a redirect URI is matched exactly.
 */
export function redirectUriProblem(uri: string, applicationType: ApplicationType): string | undefined {
  const url = URL.parse(uri);
  if (url === null) return `${JSON.stringify(uri)} is not an absolute URI`;
  if (uri.includes('#')) return `${uri} must not have a fragment`;
  if (uri.includes('*')) return `${uri} must not have a wildcard: redirect URIs are matched exactly`;
  if (url.username !== '' || url.password !== '') return `${uri} must not have user information`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? undefined
      : `${uri} is refused: http is accepted only on a loopback address (127.0.0.1, [::1], localhost); use https`;
  }
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `${uri} must not use the ${url.protocol.slice(0, -1)} scheme`;
  if (applicationType !== 'native') {
    return `${uri} is refused: a private-use URI scheme is accepted only for a client registered with "application_type": "native"`;
  }
  return undefined;
}

/** An http redirect to a loopback IP literal, as written: its host, then an optional port, then the rest. */
const LOOPBACK_IP_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::\d{1,5})?(?=[/?]|$)/;

/**
 * `uri` as written without its port when it is an http redirect to a
 * loopback IP literal, else undefined. Textual, so nothing else (path case,
 * dot segments, escapes) is normalized into a match.
 */
function loopbackWithoutPort(uri: string): string | undefined {
  const match = LOOPBACK_IP_REDIRECT.exec(uri);
  return match === null ? undefined : `http://${match[1]}${uri.slice(match[0].length)}`;
}

/**
 * Whether a redirect URI of an authorization request matches one the client
 * registered: exactly (RFC 6749 section 3.1.2.3, OAuth 2.1 section 4.1.3),
 * except that an http redirect to 127.0.0.1 or [::1] may use any port (RFC
 * 8252 section 7.3: a native client's listener gets whatever port is free).
 * The path and query must still match exactly; `localhost` has no port
 * leeway.
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const withoutPort = loopbackWithoutPort(requested);
  if (withoutPort === undefined) return false;
  return registered.some((uri) => loopbackWithoutPort(uri) === withoutPort);
}
