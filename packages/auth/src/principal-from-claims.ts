import type { Principal } from '@mcpgw/core';
import { InternedValues, internStringList } from '@mcpgw/core';
import { AuthError } from './auth-error.js';
import { claimAt } from './claim-at.js';
import type { IssuerSettings } from './issuer-settings.js';

/**
 * Scope and group lists and client ids as many tokens carry them, one copy
 * each: the token cache holds a Principal per token, and the principals of one
 * client or one role would otherwise each hold their own equal copies. Only
 * these frozen lists and the client id are shared, never the subject.
 */
const lists = new InternedValues<readonly string[]>(1_000);
const clientIds = new InternedValues<string>(1_000);

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
  const claimed =
    typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : undefined;
  const clientId = claimed === undefined ? undefined : clientIds.get(claimed, () => claimed);
  return Object.freeze({
    issuer: settings.issuer,
    subject,
    ...(clientId !== undefined ? { clientId } : {}),
    scopes: internStringList(lists, stringList(claimAt(claims, settings.scopeClaim), 'scope')),
    groups: internStringList(
      lists,
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
