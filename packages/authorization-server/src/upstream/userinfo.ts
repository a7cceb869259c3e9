import { fetchBoundedJson, jsonObject } from './bounded-json-fetch.js';
import { UpstreamSignInError } from './upstream-sign-in-error.js';

const MAX_USERINFO_BYTES = 64 * 1024;

/**
 * The UserInfo claims (OpenID Connect Core 1.0 section 5.3) of the access
 * token the code was redeemed for. Section 5.3.2: "The sub Claim in the
 * UserInfo Response MUST be verified to exactly match the sub Claim in the
 * ID Token; if they do not match, the UserInfo Response values MUST NOT be
 * used", so a mismatch fails the sign-in. Only a JSON answer is read (a
 * signed or encrypted `application/jwt` one would need keys the gateway
 * did not register).
 */
export async function fetchUserInfo(
  endpoint: string,
  accessToken: string,
  subject: string,
  fetcher: typeof fetch,
): Promise<Record<string, unknown>> {
  const { status, body } = await fetchBoundedJson(
    endpoint,
    { method: 'GET', headers: { authorization: `Bearer ${accessToken}` } },
    { fetch: fetcher, maxBytes: MAX_USERINFO_BYTES, what: 'userinfo endpoint' },
  );
  const claims = jsonObject(body);
  if (status >= 500) {
    throw new UpstreamSignInError(
      'upstream_unreachable',
      'The identity provider could not be reached. Try again later.',
      `userinfo endpoint answered ${status}`,
    );
  }
  if (status !== 200 || claims === undefined || claims.sub !== subject) {
    throw new UpstreamSignInError(
      'upstream_misconfigured',
      'The identity provider’s user information could not be used; the tenant’s administrator must check its settings.',
      status !== 200
        ? `userinfo endpoint answered ${status}`
        : claims === undefined
          ? 'userinfo is not a JSON object'
          : 'userinfo "sub" differs from the ID token\'s',
    );
  }
  return claims;
}
