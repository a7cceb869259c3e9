import { createHmac } from 'node:crypto';
import type { Principal } from '@mcpgw/core';

/**
 * A function from a verified caller to a 12-character fingerprint: an HMAC
 * keyed by the server secret, so a log reader cannot test guesses of a
 * subject against it, yet the same caller gets the same fingerprint on
 * every replica that shares SECRETS_KEY.
 */
export function createPrincipalFingerprint(secret: Buffer): (principal: Principal) => string {
  const key = createHmac('sha256', secret).update('mcpgw request-log principal fingerprint').digest();
  // The verifier hands back the same Principal object for as long as it keeps
  // the token, so the HMAC is worked out once per verified token and dropped with it.
  const known = new WeakMap<Principal, string>();
  return (principal) => {
    let fingerprint = known.get(principal);
    if (fingerprint === undefined) {
      fingerprint = createHmac('sha256', key)
        .update(`${principal.issuer}\n${principal.subject}`)
        .digest('base64url')
        .slice(0, 12);
      known.set(principal, fingerprint);
    }
    return fingerprint;
  };
}
