/** True for `localhost`, 127.0.0.0/8 and `[::1]` (as `URL.hostname` spells them). */
export function isLoopbackHostname(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Parses an issuer identifier and throws unless it is an http(s) URL without
 * credentials, query or fragment (RFC 8414 section 2: the issuer "has no query
 * or fragment components"), with a path that does not end in a slash, so
 * `${issuer}/...` builds its URLs. With `loopbackOnly` (the demo login, which
 * signs in every visitor), its host must be a loopback address.
 */
export function parseIssuer(issuer: string, loopbackOnly: boolean): URL {
  const url = URL.parse(issuer);
  if (url === null) throw new Error(`authorization server: issuer ${JSON.stringify(issuer)} is not a URL`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`authorization server: issuer ${issuer} must be an http(s) URL`);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new Error(`authorization server: issuer ${issuer} must not have credentials, a query or a fragment`);
  }
  if (url.pathname === '/' || url.pathname.endsWith('/')) {
    throw new Error(`authorization server: issuer ${issuer} needs a path that does not end with a slash`);
  }
  if (loopbackOnly && !isLoopbackHostname(url.hostname)) {
    throw new Error(
      `authorization server: refusing the demo login on ${url.hostname}; it signs every visitor in as the demo ` +
        'user, so it only runs on a loopback address (127.0.0.1, ::1, localhost)',
    );
  }
  return url;
}
