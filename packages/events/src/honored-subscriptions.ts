import type { AccessScope } from '@mcpgw/core';
import type { BackendViews } from './backend-views.js';
import { visibleSourceOf } from './caller-view.js';
import type { ListenedTenant } from './listened-tenant.js';

/**
 * The `resourceSubscriptions` a listen stream agrees to honor, in the order
 * asked (2026-07-28 basic/patterns/subscriptions, "Acknowledgment": the
 * acknowledged filter is the subset the server agreed to honor). A URI is
 * kept when the caller may see it: the routing and grants of a read and, at
 * a source that answers under the caller's backend identity, listed under
 * that identity now. Everything else is left out with one answer, whether
 * no source owns it, the grants do not cover it, or the identity does not
 * list it; the last covers both a table that does not exist and one that
 * exists but is not the caller's role's to read, so the acknowledgment
 * reveals nothing of what another role may see (ADR 0013). An identity
 * whose listing fails shows nothing (fail closed).
 */
export async function honoredSubscriptions(
  tenantId: string,
  runtime: ListenedTenant,
  scope: AccessScope,
  uris: readonly string[],
  views: BackendViews,
): Promise<string[]> {
  const owners = uris.map((uri) => visibleSourceOf(runtime, scope, uri));
  const listed = new Map<string, Promise<((uri: string) => boolean) | undefined>>();
  for (const sourceId of new Set(owners)) {
    const source = runtime.catalog.sources.find((candidate) => candidate.id === sourceId);
    if (source?.backendIdentity === undefined) continue;
    const release = views.hold(tenantId, source, scope.caller);
    // A fresh event object: the view as it stands, not an answer given for an earlier event.
    const look = views.look(tenantId, source, scope.caller, {}, false).finally(release);
    listed.set(
      source.id,
      look.then((view) => (view === undefined ? undefined : (uri: string) => view.shows(uri))),
    );
  }
  const kept: string[] = [];
  for (const [i, uri] of uris.entries()) {
    const sourceId = owners[i];
    if (sourceId === undefined) continue;
    const shows = listed.get(sourceId);
    if (shows === undefined || (await shows)?.(uri) === true) kept.push(uri);
  }
  return kept;
}
