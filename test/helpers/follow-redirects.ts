/**
 * A browser, minus the pixels: opens `start` with no prior session and
 * follows redirects one at a time, keeping cookies, until one leads to
 * `redirectUri`; returns that URL with its query (code, state, iss, or error).
 * Used to drive the development authorization server's automatic sign-in.
 */
export async function followToRedirectUri(start: URL, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const pair = cookie.split(';', 1)[0] ?? '';
      const at = pair.indexOf('=');
      if (pair.slice(at + 1) === '') jar.delete(pair.slice(0, at));
      else jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = response.headers.get('location');
    if (location === null) {
      throw new Error(
        `the authorization server stopped at ${response.status} ${url.href}: ${(await response.text()).slice(0, 300)}`,
      );
    }
    const next = new URL(location, url);
    if (`${next.origin}${next.pathname}` === redirectUri) return next;
    url = next;
  }
  throw new Error('more than 10 redirects without reaching the redirect URI');
}
