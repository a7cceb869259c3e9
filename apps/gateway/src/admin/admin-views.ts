import type { StoredEntity, StoredTenant, WriteOptions } from '@mcpgw/control-plane';
import { StoreError } from '@mcpgw/control-plane';
import type { AdminDeps } from './admin-route.js';
import type { WritePreconditions } from './etag.js';
import { AdminProblem, tenantNotFound } from './problem.js';

/** A tenant as responses show it. */
export const tenantView = (tenant: StoredTenant) => ({
  id: tenant.id,
  status: tenant.status,
  managedBy: tenant.managedBy,
  version: tenant.version,
  revision: tenant.revision,
  updatedAt: tenant.updatedAt,
  settings: tenant.document,
});

/** An issuer, source, grant or binding as responses show it: never a credential, only which ones exist. */
export const entityView = (entity: StoredEntity, tenant: StoredTenant) => ({
  name: entity.name,
  document: entity.document,
  version: entity.version,
  updatedAt: entity.updatedAt,
  ...(entity.kind === 'source' ? { secretNames: [...entity.secretNames] } : {}),
  tenantManagedBy: tenant.managedBy,
});

/** The tenant a request addresses, or the 404 that a tenant one may not see gets too. */
export async function requireTenant(deps: AdminDeps, tenantId: string): Promise<StoredTenant> {
  const tenant = await deps.store.getTenant(tenantId);
  if (tenant === undefined) throw tenantNotFound();
  return tenant;
}

/**
 * The store preconditions of a write from the request's conditional headers
 * (RFC 9110 section 13.1): replacing or deleting what exists needs If-Match
 * (428 without it, RFC 6585 section 3: no lost updates by a writer that never
 * read); creating needs nothing, and two creators race to one 201 and one 409.
 */
export function writeOptions(
  preconditions: WritePreconditions,
  current: { version: number } | undefined,
  what: string,
): WriteOptions {
  if (preconditions.create === true) {
    if (current !== undefined)
      throw new AdminProblem('precondition-failed', `${what} already exists (If-None-Match: *)`);
    return { create: true };
  }
  if (preconditions.ifVersion !== undefined || preconditions.mustExist === true) {
    if (current === undefined) throw new AdminProblem('precondition-failed', `${what} does not exist (If-Match)`);
    return { ifVersion: preconditions.ifVersion ?? current.version };
  }
  if (current !== undefined) {
    throw new AdminProblem(
      'precondition-required',
      `${what} exists: send If-Match with the ETag you read, so that no one else's change is overwritten`,
      [{ header: 'If-Match', detail: 'required to change or delete an existing resource' }],
    );
  }
  return { create: true };
}

/** RFC 9110 status of each store refusal; nothing was written when one is thrown. */
export function problemOfStoreError(error: StoreError): AdminProblem {
  switch (error.code) {
    case 'not_found':
      return new AdminProblem('not-found', error.message);
    case 'precondition_failed':
      return new AdminProblem('precondition-failed', error.message);
    case 'conflict':
      return new AdminProblem('conflict', error.message);
  }
}

export { StoreError };
