import { createHash } from 'node:crypto';
import type { AccessScope, ListingRange, Principal } from '@mcpgw/core';
import type { CompiledGrants } from './compile-grants.js';
import { compileGrants } from './compile-grants.js';
import type { Grant } from './grant.js';
import { satisfiesMatch } from './grant-conditions.js';
import type { UriPattern } from './uri-pattern.js';
import { isAmbiguousUri } from './uri-pattern.js';
import { listingRangesOf } from './listing-prefixes.js';

/**
 * A caller's resource set: a pure function of (tenant, verified principal,
 * grants). The fingerprint hashes exactly those inputs as the policy used
 * them (tenant, issuer, subject and the grants that matched, in full), so it
 * changes whenever the caller's access could, and it keys every private cache
 * entry and binds every cursor.
 *
 * The gateway passes the tenant's grants compiled once at load
 * ({@link compileGrants}); a plain list is compiled on the spot.
 */
export function resolveAccess(
  tenantId: string,
  principal: Principal,
  grants: CompiledGrants | readonly Grant[],
): AccessScope {
  const compiled = isCompiled(grants) ? grants : compileGrants(grants);
  const effective = matchingGrants(compiled, principal);
  const effectiveGrants = effective.map((grant) => ({ name: grant.name, match: grant.match, allow: grant.allow }));
  const fingerprint = createHash('sha256')
    .update(
      canonicalJson({
        v: 1,
        tenant: tenantId,
        issuer: principal.issuer,
        subject: principal.subject,
        grants: effectiveGrants,
      }),
    )
    .digest('base64url');
  // What the caller may see reads nothing but the effective grants, so it is worked out once per view
  // and shared by every principal with the same grants (many principals, one role: one copy).
  const view = createHash('sha256')
    .update(canonicalJson({ v: 1, tenant: tenantId, grants: effectiveGrants }))
    .digest('base64url');
  // The caller rides along for sources that answer under a backend identity of their own (Source.backendIdentity).
  const caller = { tenantId, principal, fingerprint };
  // `view` comes back from the shared view: one copy of the string for every principal of it, not one each.
  return { fingerprint, caller, ...viewAccess(compiled, view, effective) };
}

/** The part of an AccessScope that only the effective grants decide, with the view's hash. */
type ViewAccess = Pick<AccessScope, 'allowsSource' | 'allows' | 'listingRanges' | 'listingPrefixes'> & {
  readonly view: string;
};

/** Views by compiled grants (a tenant's, compiled once at load), then by view hash; bounded per tenant. */
const viewsByGrants = new WeakMap<CompiledGrants, Map<string, ViewAccess>>();
const MAX_VIEWS_PER_TENANT = 1000;

function viewAccess(compiled: CompiledGrants, view: string, effective: readonly Grant[]): ViewAccess {
  let views = viewsByGrants.get(compiled);
  if (views === undefined) {
    views = new Map();
    viewsByGrants.set(compiled, views);
  }
  let access = views.get(view);
  if (access === undefined) {
    access = { view, ...buildViewAccess(compiled, effective) };
    // Grants matching on subjects could make a view per caller: past the bound, start again.
    if (views.size >= MAX_VIEWS_PER_TENANT) views.clear();
    views.set(view, access);
  }
  return access;
}

function buildViewAccess(compiled: CompiledGrants, effective: readonly Grant[]): Omit<ViewAccess, 'view'> {
  const rules = new Map<string, UriPattern[] | 'all'>();
  for (const grant of effective) {
    for (const allow of grant.allow) {
      const current = rules.get(allow.source);
      const patterns = compiled.patterns.get(allow);
      if (current === 'all' || patterns === undefined) {
        rules.set(allow.source, 'all');
      } else {
        rules.set(allow.source, [...(current ?? []), ...patterns]);
      }
    }
  }
  const ranges = new Map<string, readonly ListingRange[] | undefined>();
  const prefixes = new Map<string, readonly string[] | undefined>();
  const listingRanges = (sourceId: string): readonly ListingRange[] | undefined => {
    const rule = rules.get(sourceId);
    if (rule === undefined) return [];
    if (!ranges.has(sourceId)) {
      const found = listingRangesOf(rule === 'all' ? 'all' : rule.map((pattern) => pattern.source));
      ranges.set(sourceId, found);
      prefixes.set(
        sourceId,
        found?.map((range) => range.prefix),
      );
    }
    return ranges.get(sourceId);
  };

  return {
    allowsSource: (sourceId) => rules.has(sourceId),
    allows(sourceId, uri) {
      const rule = rules.get(sourceId);
      if (rule === undefined) return false;
      if (rule === 'all') return true;
      return !isAmbiguousUri(uri) && rule.some((pattern) => pattern.matches(uri));
    },
    listingRanges,
    listingPrefixes(sourceId) {
      if (!rules.has(sourceId)) return [];
      listingRanges(sourceId);
      return prefixes.get(sourceId);
    },
  };
}

/**
 * The grants whose `match` the principal satisfies, in the tenant's order:
 * the only grants {@link resolveAccess} builds a scope from (the admin
 * preview names them with this very function).
 */
export function matchingGrants(grants: CompiledGrants, principal: Principal): readonly Grant[] {
  return grants.grants.filter((grant) => satisfiesMatch(grant.match, principal));
}

function isCompiled(grants: CompiledGrants | readonly Grant[]): grants is CompiledGrants {
  return !Array.isArray(grants);
}

/** JSON with object keys sorted, so equal inputs hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
