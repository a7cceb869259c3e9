import type { ClaimMapping } from '@mcpgw/config';
import { RESERVED_TOKEN_CLAIMS } from '@mcpgw/config';
import { valueAtPath } from '@mcpgw/core';
import { UpstreamSignInError } from './upstream-sign-in-error.js';

/**
 * Bounds on what a sign-in puts into the gateway's tokens. Every access
 * token carries these claims, so an upstream (or a user who can edit their
 * own profile there) must not be able to grow them without limit:
 * - the subject: OpenID Connect Core 1.0 section 2, "It MUST NOT exceed 255 ASCII characters";
 * - groups: at most {@link MAX_GROUPS} names (Entra ID itself stops at 200 in
 *   a JWT and sends an overage link instead), each at most
 *   {@link MAX_TEXT_LENGTH} characters; the first ones in the provider's order are kept;
 * - `name` is cut to {@link MAX_TEXT_LENGTH} characters, `email` (RFC 5321
 *   section 4.5.3.1: 254 for a path) dropped beyond 320;
 * - an extra claim's JSON is at most {@link MAX_EXTRA_CLAIM_BYTES}, all of
 *   them together at most {@link MAX_EXTRA_CLAIMS_BYTES}.
 * What is left out is named in `dropped`, for the log; a sign-in is refused
 * only when there is no usable subject.
 */
export const MAX_SUBJECT_LENGTH = 255;
export const MAX_GROUPS = 200;
export const MAX_TEXT_LENGTH = 256;
export const MAX_EMAIL_LENGTH = 320;
export const MAX_EXTRA_CLAIM_BYTES = 1024;
export const MAX_EXTRA_CLAIMS_BYTES = 4096;

/** The claims the gateway's tokens carry for an account (beside what the authorization server sets). */
export interface AccountClaims {
  readonly email?: string;
  readonly name?: string;
  /** Group or role names, as grants' `match.groups` see them. */
  readonly groups?: readonly string[];
  /** The mapping's `extra` claims, by their token claim name. */
  readonly [extra: string]: unknown;
}

/** An upstream user as the hosted authorization server knows them. */
export interface MappedAccount {
  /**
   * The oidc-provider account id, hence the `sub` of the gateway's tokens,
   * which grants' `match.subjects` name: the mapped upstream subject as the
   * provider sent it, unique and never reassigned within that issuer (OpenID
   * Connect Core 1.0 section 2). A tenant has one upstream, so it is unique
   * within the hosted issuer too; stored account claims carry
   * `upstreamIssuer` so that after the tenant changes its upstream, an
   * account recorded under the old one is not taken for the new one's.
   */
  readonly accountId: string;
  readonly upstreamIssuer: string;
  readonly claims: AccountClaims;
  /** What was left out and why (for the log, never the page). */
  readonly dropped: readonly string[];
}

/**
 * A claim named in the mapping: first by its name as it stands, since claim
 * names may contain dots (RFC 7519 section 4.2, `http://example.com/is_root`),
 * and only when no claim has that name as a dotted path through nested
 * objects, as providers nest roles: Keycloak's `realm_access.roles`, a
 * client's `resource_access.<client>.roles`. The same rule as the gateway's
 * resource-server claim settings.
 */
export function claimAt(claims: Readonly<Record<string, unknown>>, path: string): unknown {
  return Object.hasOwn(claims, path) ? claims[path] : valueAtPath(claims, path);
}

/** Every upstream claim the mapping reads. */
export function mappedClaimPaths(mapping: ClaimMapping): string[] {
  return [mapping.subject, mapping.email, mapping.name, mapping.groups, ...Object.values(mapping.extra)];
}

// C0 and C1 controls and DEL: nothing a name, an address or a group has, and they break logs and headers.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Applies the tenant's claim mapping to a verified upstream identity: the
 * account id from the subject (a string, or an integer as some providers
 * send), and the bounded claims the tokens carry. Rejects with
 * `subject_missing` when the subject is absent, empty, too long or not text.
 */
export function mapUpstreamClaims(
  mapping: ClaimMapping,
  identity: { readonly upstreamIssuer: string; readonly claims: Readonly<Record<string, unknown>> },
): MappedAccount {
  const { claims } = identity;
  const dropped: string[] = [];
  const subject = subjectOf(claimAt(claims, mapping.subject));
  if (subject === undefined) {
    throw new UpstreamSignInError(
      'subject_missing',
      'The identity provider did not say who signed in, so the sign-in was stopped; the tenant’s administrator must check the subject claim mapping.',
      `the claim "${mapping.subject}" is absent, empty, longer than ${MAX_SUBJECT_LENGTH} characters or not text`,
    );
  }
  const out: Record<string, unknown> = {};

  const email = claimAt(claims, mapping.email);
  if (typeof email === 'string' && email.length <= MAX_EMAIL_LENGTH && /^[^\s@]+@[^\s@]+$/.test(email)) {
    out.email = email;
  } else if (email !== undefined)
    dropped.push(`email ("${mapping.email}"): not an address of at most ${MAX_EMAIL_LENGTH} characters`);

  const name = claimAt(claims, mapping.name);
  if (typeof name === 'string' && !CONTROL.test(name) && name.trim() !== '') {
    out.name = truncate(name, MAX_TEXT_LENGTH);
    if (out.name !== name) dropped.push(`name ("${mapping.name}"): cut to ${MAX_TEXT_LENGTH} characters`);
  } else if (name !== undefined) dropped.push(`name ("${mapping.name}"): not text`);

  const groups = groupsOf(claimAt(claims, mapping.groups), mapping.groups, dropped);
  if (groups !== undefined) out.groups = groups;
  else if (isEntraGroupsOverage(claims, mapping.groups)) {
    dropped.push(
      `groups ("${mapping.groups}"): the provider sent a link instead of the groups (Entra ID does past 200 groups); filter the groups it emits`,
    );
  }

  let extraBytes = 0;
  for (const [target, path] of Object.entries(mapping.extra)) {
    const value = claimAt(claims, path);
    if (value === undefined) continue;
    if (RESERVED_TOKEN_CLAIMS.has(target)) {
      dropped.push(`${target} ("${path}"): a claim name the authorization server sets itself`);
      continue;
    }
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
    if (bytes > MAX_EXTRA_CLAIM_BYTES || extraBytes + bytes > MAX_EXTRA_CLAIMS_BYTES) {
      dropped.push(`${target} ("${path}"): larger than the extra claims may be`);
      continue;
    }
    extraBytes += bytes;
    // A JSON copy: nothing of the provider's object graph (getters, prototypes) reaches a token.
    out[target] = JSON.parse(JSON.stringify(value)) as unknown;
  }

  return { accountId: subject, upstreamIssuer: identity.upstreamIssuer, claims: out, dropped };
}

function subjectOf(value: unknown): string | undefined {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || text === '' || text.length > MAX_SUBJECT_LENGTH || CONTROL.test(text)) {
    return undefined;
  }
  return text;
}

/** A string is one group; an array keeps its usable strings, deduplicated, at most {@link MAX_GROUPS}. */
function groupsOf(value: unknown, path: string, dropped: string[]): string[] | undefined {
  if (value === undefined) return undefined;
  const items: unknown[] = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  if (items.length === 0 && typeof value !== 'string' && !Array.isArray(value)) {
    dropped.push(`groups ("${path}"): neither a string nor an array`);
    return undefined;
  }
  const kept = new Set<string>();
  let unusable = 0;
  let overflow = 0;
  for (const item of items) {
    if (typeof item !== 'string' || item === '' || item.length > MAX_TEXT_LENGTH || CONTROL.test(item)) unusable += 1;
    else if (kept.size >= MAX_GROUPS && !kept.has(item)) overflow += 1;
    else kept.add(item);
  }
  if (unusable > 0)
    dropped.push(`groups ("${path}"): ${unusable} entries that are not names of at most ${MAX_TEXT_LENGTH} characters`);
  if (overflow > 0) dropped.push(`groups ("${path}"): ${overflow} past the first ${MAX_GROUPS}`);
  return [...kept];
}

/** Entra ID's groups overage: `_claim_names` names the claim, and `groups` is absent. */
function isEntraGroupsOverage(claims: Readonly<Record<string, unknown>>, path: string): boolean {
  const names = claims._claim_names;
  return typeof names === 'object' && names !== null && Object.hasOwn(names, path);
}

/** The first `max` characters (code points, so a surrogate pair is never split). */
function truncate(text: string, max: number): string {
  const points = Array.from(text);
  return points.length <= max ? text : points.slice(0, max).join('');
}
