import type { SourceFactory } from '@mcpgw/core';
import { jsonPointer } from '@mcpgw/core';
import { importAuthorizationServer } from './authorization-server-import.js';
import type { EntityWriter, StoredEntity, TenantEntityKind } from './entity-rows.js';
import { AUTHORIZATION_SERVER_NAME } from './entity-rows.js';
import type { ImportedSource } from './source-import.js';
import { importSource } from './source-import.js';
import { operatorFieldSet } from './tenant-model.js';
import type { Document } from './tenant-rows.js';
import { TenantWriteRefusal } from './tenant-write-refusal.js';
import type { ControlPlaneReads } from './write-check.js';

/**
 * Refuses `{ "$env": NAME }` references in what the API writes: in the
 * bootstrap file they read the gateway's environment, which a tenant admin
 * must never be able to read back through a source.
 */
export function refuseEnvReferences(value: unknown, path: (string | number)[] = []): void {
  if (Array.isArray(value)) value.forEach((item, i) => refuseEnvReferences(item, [...path, i]));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$env') {
        throw new TenantWriteRefusal('validation-failed', 'Environment references are for the bootstrap file only', [
          { pointer: jsonPointer([...path, key]), detail: 'write the value itself (credentials under "secrets")' },
        ]);
      }
      refuseEnvReferences(item, [...path, key]);
    }
  }
}

/** Refuses a tenant admin's write of a field only operators may set (the tenant model's rule). */
function refuseOperatorFields(writer: EntityWriter, kind: TenantEntityKind | 'settings', document: Document): void {
  const field = operatorFieldSet(writer, kind, document, undefined);
  if (field?.rule.operatorsOnly !== undefined) throw new TenantWriteRefusal('forbidden', field.rule.operatorsOnly);
}

/**
 * The admin API's importer of a tenant's own settings: every one is an
 * operator's (the tenant model), so a tenant admin's write is refused.
 */
export function importSettings(body: Document, writer: EntityWriter): Document {
  refuseOperatorFields(writer, 'settings', body);
  return body;
}

/** One entity write as the admin API received it: the path's name and the body. */
export interface EntityWriteInput {
  readonly tenantId: string;
  readonly kind: TenantEntityKind;
  readonly name: string;
  readonly body: Document;
  readonly writer: EntityWriter;
}

/**
 * The checks of an entity write that need nothing but its body and name: no
 * environment references, no field the writer may not set (the tenant
 * model; for a source, judged on the source as served, in importEntity), an
 * issuer named by its own URL. The route runs them before anything else (so
 * a bad body is answered before its preconditions), and importEntity runs
 * them again inside the transaction.
 */
export function checkEntityBody(input: EntityWriteInput): void {
  const { kind, name, body, writer } = input;
  refuseEnvReferences(body);
  if (kind === 'source') return;
  refuseOperatorFields(writer, kind, body);
  if (kind === 'authorization-server' && name !== AUTHORIZATION_SERVER_NAME) {
    throw new TenantWriteRefusal('validation-failed', 'A tenant has one authorization server', [
      { parameter: 'name', detail: `must be ${JSON.stringify(AUTHORIZATION_SERVER_NAME)}` },
    ]);
  }
  if (kind === 'issuer') {
    const expected = body.development === true ? 'development' : body.issuer;
    if (name !== expected) {
      throw new TenantWriteRefusal('validation-failed', 'An issuer is named by its issuer URL (or "development")', [
        { parameter: 'name', detail: `must be ${JSON.stringify(expected)}` },
      ]);
    }
  }
}

/**
 * The admin API's importer of one entity (the bootstrap file's entry of that
 * kind, its name from the path): checkEntityBody, then a source by its
 * type's model (importSource), the authorization server by its own
 * (importAuthorizationServer: its client secret sealed apart). Runs inside the write's transaction, after
 * the tenant's lock, against the stored entity it replaces (`current`);
 * throws TenantWriteRefusal, changing nothing.
 */
export async function importEntity(
  context: { readonly sourceFactories: ReadonlyMap<string, SourceFactory>; readonly reads: ControlPlaneReads },
  input: EntityWriteInput,
  current: StoredEntity | undefined,
): Promise<ImportedSource> {
  checkEntityBody(input);
  if (input.kind === 'authorization-server') {
    return importAuthorizationServer(context.reads, input.tenantId, input.body, current);
  }
  if (input.kind !== 'source') return { document: input.body, secrets: undefined };
  return importSource(context, input.tenantId, input.name, input.body, input.writer, current);
}
