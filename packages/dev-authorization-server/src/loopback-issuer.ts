/**
 * The development authorization server logs anyone in as the demo user and
 * consents on their behalf, so it must never be
 * reachable from another machine: its issuer has to name a loopback host.
 */

/** True for `localhost`, 127.0.0.0/8 and `[::1]` (as `URL.hostname` spells them). */
export function isLoopbackHostname(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Parses the issuer and throws unless it is an http(s) URL on a loopback host
 * without query or fragment (RFC 8414 §2: the issuer "has no query or fragment
 * components"). The path must be non-empty (the server shares the gateway's
 * port under it) and end without a slash, so `${issuer}/...` builds its URLs.
 */
export function assertLoopbackIssuer(issuer: string): URL {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`development authorization server: issuer ${JSON.stringify(issuer)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`development authorization server: issuer ${issuer} must be an http(s) URL`);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new Error(
      `development authorization server: issuer ${issuer} must not have credentials, a query or a fragment`,
    );
  }
  if (!isLoopbackHostname(url.hostname)) {
    throw new Error(
      `development authorization server: refusing to start on ${url.hostname}; it logs every visitor in ` +
        'as the demo user, so it only runs on a loopback address (127.0.0.1, ::1, localhost)',
    );
  }
  if (url.pathname === '/' || url.pathname === '') {
    throw new Error(
      `development authorization server: issuer ${issuer} needs a path (such as /dev-idp) so it can share the gateway's port`,
    );
  }
  if (url.pathname.endsWith('/')) {
    throw new Error(`development authorization server: issuer ${issuer} must not end with a slash`);
  }
  return url;
}
