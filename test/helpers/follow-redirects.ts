/**
 * A browser, minus the pixels: opens `start` with no prior session and
 * follows redirects one at a time, keeping cookies, until one leads to
 * `redirectUri`; returns that URL with its query (code, state, iss, or error).
 *
 * On the way it answers the hosted authorization server's pages as a user
 * would: on the demo login it presses "Continue as the demo user", on the
 * consent page "Allow" (or, with `answer: 'deny'`, "Cancel" and "Deny").
 * A page it has no button for (an error page) ends the walk with an error
 * quoting it.
 */
export async function followToRedirectUri(
  start: URL,
  redirectUri: string,
  options: {
    answer?: 'allow' | 'deny';
    onPage?: (page: { url: URL; html: string }) => void;
    /** Sends each request (default: the global fetch); a test of replicas sends each step to another. */
    fetch?: typeof fetch;
  } = {},
): Promise<URL> {
  const jar = new Map<string, string>();
  const pressed = options.answer === 'deny' ? ['deny'] : ['login', 'allow'];
  let request: { url: URL; form?: URLSearchParams } = { url: start };
  for (let hop = 0; hop < 20; hop++) {
    const { url, form } = request;
    const response = await (options.fetch ?? fetch)(url, {
      redirect: 'manual',
      ...(form === undefined ? {} : { method: 'POST', body: form }),
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
      const page = await response.text();
      options.onPage?.({ url, html: page });
      const answer = response.status === 200 ? formAnswer(page, pressed) : undefined;
      if (answer === undefined) {
        throw new Error(`the authorization server stopped at ${response.status} ${url.href}: ${page.slice(0, 600)}`);
      }
      request = { url: new URL(answer.action, url), form: answer.form };
      continue;
    }
    const next = new URL(location, url);
    if (`${next.origin}${next.pathname}` === redirectUri) return next;
    request = { url: next };
  }
  throw new Error('more than 20 steps without reaching the redirect URI');
}

/** The page's one form, submitted with the first of `pressed` its buttons offer (`name="decision"`). */
function formAnswer(page: string, pressed: readonly string[]): { action: string; form: URLSearchParams } | undefined {
  const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(page);
  if (form === null) return undefined;
  const [, action = '', body = ''] = form;
  const fields = new URLSearchParams();
  for (const hidden of body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields.set(unescape(hidden[1] ?? ''), unescape(hidden[2] ?? ''));
  }
  const offered = [...body.matchAll(/<button[^>]* name="decision" value="([^"]+)"/g)].map((button) => button[1]);
  const decision = pressed.find((value) => offered.includes(value));
  if (decision === undefined) return undefined;
  fields.set('decision', decision);
  return { action: unescape(action), form: fields };
}

/** The entities the pages escape (pages/markup.ts). */
function unescape(text: string): string {
  return text
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}
