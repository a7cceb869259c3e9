import type { ControlPlaneStore, Document, StoredEntity, StoredTenant, WriteOptions } from '@mcpgw/control-plane';
import type { StoreError } from '@mcpgw/control-plane';
import { valueAtPath, type SourceFactory } from '@mcpgw/core';
import { credentialsOf, setPath } from '@mcpgw/tenancy';
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

/** Shown in place of a credential written in clear into a source's options (the bootstrap file may). */
export const REDACTED = '[redacted]';

/**
 * A source's document as responses show it: a credential the bootstrap file
 * wrote in clear among the options is replaced (a `{ "$env": NAME }`
 * reference stays: it names a variable, it holds no value).
 */
function shownSourceDocument(document: Document, registry: ReadonlyMap<string, SourceFactory>): Document {
  let shown = document;
  for (const path of registry.get(String(document.type))?.model.credentials ?? []) {
    if (typeof valueAtPath(document, path) !== 'string') continue;
    if (shown === document) shown = { ...document };
    setPath(shown, path, REDACTED);
  }
  return shown;
}

/**
 * An issuer, source, grant or binding as responses show it: never a
 * credential, only which ones will be served (the sealed ones at the type's
 * credential paths).
 */
export const entityView = (
  entity: StoredEntity,
  tenant: StoredTenant,
  registry: ReadonlyMap<string, SourceFactory>,
) => {
  if (entity.kind !== 'source') {
    return {
      name: entity.name,
      document: entity.document,
      version: entity.version,
      updatedAt: entity.updatedAt,
      tenantManagedBy: tenant.managedBy,
    };
  }
  const declared = credentialsOf(
    registry,
    entity.document.type,
    Object.fromEntries(entity.secretNames.map((name) => [name, ''])),
  );
  return {
    name: entity.name,
    document: shownSourceDocument(entity.document, registry),
    version: entity.version,
    updatedAt: entity.updatedAt,
    secretNames: Object.keys(declared),
    tenantManagedBy: tenant.managedBy,
  };
};

/** The tenant a request addresses, or the 404 that a tenant one may not see gets too. */
export async function requireTenant(
  deps: { readonly store: Pick<ControlPlaneStore, 'getTenant'> },
  tenantId: string,
): Promise<StoredTenant> {
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
