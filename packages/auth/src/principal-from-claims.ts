import type { Principal } from '@mcpgw/core';
import { AuthError } from './auth-error.js';
import { claimAt } from './claim-at.js';
import type { IssuerSettings } from './issuer-settings.js';

/**
 * The Principal of a verified token (JWT claims or an RFC 7662 answer), using
 * the issuer's claim names (nested paths such as `realm_access.roles` too: {@link claimAt}). Claims of the wrong type refuse the token rather
 * than silently granting nothing: they mean the issuer and the configuration
 * disagree, which an operator must see.
 */
export function principalFromClaims(
  claims: Readonly<Record<string, unknown>>,
  settings: IssuerSettings,
  expiresAt: number,
): Principal {
  const subject = claims.sub;
  if (typeof subject !== 'string' || subject === '') {
    throw new AuthError('invalid_token', 'The token has no subject ("sub")');
  }
  const clientId =
    typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : undefined;
  return Object.freeze({
    issuer: settings.issuer,
    subject,
    ...(clientId !== undefined ? { clientId } : {}),
    scopes: Object.freeze(stringList(claimAt(claims, settings.scopeClaim), 'scope')),
    groups: Object.freeze(
      settings.groupsClaim === undefined ? [] : stringList(claimAt(claims, settings.groupsClaim), 'groups'),
    ),
    expiresAt,
  });
}

/** RFC 9068 section 2.2.3: `scope` is space-delimited; `scp`, groups and roles are often arrays. */
function stringList(value: unknown, what: string): string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return value.split(' ').filter((item) => item !== '');
  if (Array.isArray(value) && value.every((item) => typeof item === 'string'))
    return value.filter((item) => item !== '');
  throw new AuthError('invalid_token', `The token's ${what} claim is malformed`);
}
