import { createHash } from 'node:crypto';
import type { Principal } from '@mcpgw/core';
import type { CallerIdentityOptions, TagClaim } from './caller-identity-options.js';

/**
 * How one caller reads at the bucket, decided from their verified claims
 * by `callerIdentity` (README.md, "Caller identity"):
 *
 * - `assume`: credentials of `roleArn` with these session tags, from
 *   AssumeRoleWithWebIdentity; `sessionName` names the session in the
 *   backend's audit trail;
 * - `refuse`: no mapping entry matched and the default is `refuse` (or
 *   there is no caller): the caller sees nothing of the source;
 * - `unusable`: a claim a session tag would carry cannot be one as it is:
 *   the caller gets an error saying why, never a value changed into what
 *   could be someone else's.
 *
 * `key` is the backend identity: equal for callers the bucket treats
 * alike (same role, same tags), different otherwise. Credentials and
 * anything read with them are shared by exactly the callers of one key.
 */
export type CallerPlan =
  | {
      readonly kind: 'assume';
      readonly roleArn: string;
      readonly sessionName: string;
      /** `[name, value]`, in the order of `sessionTags`. */
      readonly tags: ReadonlyArray<readonly [string, string]>;
      readonly key: string;
    }
  | { readonly kind: 'refuse'; readonly key: string }
  | { readonly kind: 'unusable'; readonly reason: string; readonly key: string };

/** AWS STS: a session tag value is at most 256 characters of these. */
const TAG_VALUE = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u;
/** AWS STS: RoleSessionName is `[\w+=,.@-]{2,64}`. */
const SESSION_NAME = /^[\w+=,.@-]{2,64}$/;

/**
 * The web identity token's `sub` for a caller: the tenant, then the
 * caller's own subject (tenant ids are slugs without `:`, so the first two
 * separators are unambiguous). IAM trust policies condition on it
 * (`StringLike` `tenant:acme:*`).
 */
export function webIdentitySubject(tenantId: string, subject: string): string {
  return `tenant:${tenantId}:${subject}`;
}

/**
 * RoleSessionName from the caller's subject: as it is when STS accepts it,
 * else its accepted characters (others as `_`), cut short, with 10 hex
 * digits of its SHA-256 so that two subjects cleaned alike still differ.
 * Only for the audit trail: permissions key on the role and tags.
 */
export function sessionNameOf(subject: string): string {
  if (SESSION_NAME.test(subject)) return subject;
  const cleaned = subject.replace(/[^\w+=,.@-]/g, '_');
  const digest = createHash('sha256').update(subject, 'utf8').digest('hex').slice(0, 10);
  return `${cleaned.slice(0, 53)}-${digest}`;
}

/** The caller's plan for `principal` (undefined: no caller), a pure function of the options and the caller. */
export function planFor(
  options: CallerIdentityOptions,
  tenantId: string,
  principal: Principal | undefined,
): CallerPlan {
  const roleArn =
    principal === undefined
      ? undefined
      : (options.mapping.find((entry) => matches(entry.match, principal))?.roleArn ??
        (options.default === 'refuse' ? undefined : options.default.roleArn));
  if (principal === undefined || roleArn === undefined) return { kind: 'refuse', key: JSON.stringify(['refuse']) };
  const tags: Array<readonly [string, string]> = [];
  for (const [name, claim] of Object.entries(options.sessionTags)) {
    const value = tagValue(claim, tenantId, principal);
    if (typeof value !== 'string') {
      const reason = `the caller's ${claim.replace('_', ' ')} ${value.problem}, so it cannot be the session tag "${name}"`;
      return { kind: 'unusable', reason, key: JSON.stringify(['unusable', name]) };
    }
    tags.push([name, value]);
  }
  return {
    kind: 'assume',
    roleArn,
    sessionName: sessionNameOf(principal.subject),
    tags,
    key: JSON.stringify(['assume', roleArn, tags]),
  };
}

/**
 * A tag's value: the claim as it is, or for a list its distinct values,
 * sorted, joined by single spaces (as an OAuth scope string is, RFC 6749
 * section 3.3). A value STS would refuse, or one holding the separator, is
 * a problem: cleaning it could turn it into another caller's value.
 */
function tagValue(claim: TagClaim, tenantId: string, principal: Principal): string | { problem: string } {
  const list = (values: readonly string[]) => {
    const distinct = [...new Set(values)].sort();
    if (distinct.some((value) => value === '' || /\p{Z}/u.test(value))) {
      return { problem: 'include a value that is empty or holds a space (the separator of a list tag)' };
    }
    return distinct.join(' ');
  };
  const value = (() => {
    switch (claim) {
      case 'subject':
        return principal.subject;
      case 'issuer':
        return principal.issuer;
      case 'client_id':
        return principal.clientId ?? '';
      case 'tenant':
        return tenantId;
      case 'groups':
        return list(principal.groups);
      case 'scopes':
        return list(principal.scopes);
    }
  })();
  if (typeof value !== 'string') return value;
  if (value.length > 256) return { problem: 'is longer than 256 characters (the most a session tag holds)' };
  if (!TAG_VALUE.test(value)) {
    return { problem: 'holds characters a session tag cannot (only letters, digits, spaces and _.:/=+-@)' };
  }
  return value;
}

type Match = CallerIdentityOptions['mapping'][number]['match'];

/** Like a grant's match: each present matcher needs one value in common; absent ones impose nothing. */
function matches(match: Match, principal: Principal): boolean {
  return (
    anyOf(match.groups, principal.groups) &&
    anyOf(match.scopes, principal.scopes) &&
    anyOf(match.subjects, [principal.subject])
  );
}

function anyOf(required: readonly string[] | undefined, held: readonly string[]): boolean {
  return required === undefined || required.some((value) => held.includes(value));
}
