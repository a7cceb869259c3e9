import { createHash } from 'node:crypto';
import type { AccessScope, Principal } from '@mcpgw/core';
import { unrestrictedScope } from '@mcpgw/core';
import type { TenantRuntime } from '../tenant-runtime.js';

/** Who a listen stream serves: enough to work out their resource set again under any runtime. */
export interface StreamCaller {
  readonly tenantId: string;
  /** Absent for an anonymous (loopback development) tenant. */
  readonly principal: Principal | undefined;
}

/** A caller's resource set under the tenant's serving runtime, or why they have none any more. */
export type CallerView =
  | { readonly ok: true; readonly runtime: TenantRuntime; readonly scope: AccessScope }
  | { readonly ok: false; readonly reason: 'tenant-gone' | 'access-revoked' };

/**
 * The caller's view now, from the serving runtime and without holding it (a
 * stream must not keep a retired runtime from closing): the same grants
 * `resources/list` and `resources/read` apply, resolved for the principal
 * the stream was opened with.
 */
export function resolveCallerView(tenants: ReadonlyMap<string, TenantRuntime>, caller: StreamCaller): CallerView {
  const runtime = tenants.get(caller.tenantId);
  if (runtime === undefined) return { ok: false, reason: 'tenant-gone' };
  if (runtime.auth === undefined) return { ok: true, runtime, scope: unrestrictedScope };
  // A tenant that started authenticating: an anonymous stream has no principal to resolve.
  const scope = caller.principal === undefined ? undefined : runtime.auth.accessOf(caller.principal);
  return scope === undefined ? { ok: false, reason: 'access-revoked' } : { ok: true, runtime, scope };
}

/**
 * The id of the source whose resource `uri` is, when the caller may see it;
 * else undefined. The same routing and test as a read (the catalog: the first
 * source that owns the URI, then the caller's grants), so a URI outside the
 * caller's set and one no source owns look the same.
 */
export function visibleSourceOf(runtime: TenantRuntime, scope: AccessScope, uri: string): string | undefined {
  const owner = runtime.catalog.sources.find((source) => source.owns(uri));
  if (owner === undefined || !scope.allowsSource(owner.id) || !scope.allows(owner.id, uri)) return undefined;
  return owner.id;
}

/**
 * What decides the caller's resource set besides the backends' contents: the
 * grants that match them (`AccessScope.view`) and the configuration of each
 * source they can see. Equal digests before and after a configuration change
 * mean their set did not move, so they get no `list_changed` for it.
 */
export function viewDigest(runtime: TenantRuntime, scope: AccessScope): string {
  const visible = runtime.config.sources.filter((entry) => scope.allowsSource(entry.id));
  return createHash('sha256')
    .update(JSON.stringify([scope.view ?? scope.fingerprint, visible]))
    .digest('base64url');
}

/**
 * For each source that owns one of `uris` (routed as a read), a digest of its
 * configuration entry. A configuration change that alters a source's entry
 * may change what its resources read (a static source's text is its
 * configuration), so subscribers to its URIs get `updated` for them.
 */
export function ownerDigests(runtime: TenantRuntime, uris: Iterable<string>): Map<string, string> {
  const digests = new Map<string, string>();
  for (const uri of uris) {
    const owner = runtime.catalog.sources.find((source) => source.owns(uri));
    if (owner === undefined || digests.has(owner.id)) continue;
    const entry = runtime.config.sources.find((candidate) => candidate.id === owner.id);
    digests.set(
      owner.id,
      createHash('sha256')
        .update(JSON.stringify(entry ?? null))
        .digest('base64url'),
    );
  }
  return digests;
}
