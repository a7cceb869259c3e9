import { isDeepStrictEqual } from 'node:util';
import type { SourceFactory, SourceModel } from '@mcpgw/core';
import { jsonPointer, valueAtPath } from '@mcpgw/core';
import type { EntityWriter, StoredEntity } from './entity-rows.js';
import { credentialsOf, servedSourceEntry } from './served-tenant.js';
import { fieldRule, operatorFieldSet } from './tenant-model.js';
import type { Document } from './tenant-rows.js';
import type { TenantFieldError } from './tenant-write-refusal.js';
import { TenantWriteRefusal } from './tenant-write-refusal.js';
import type { ControlPlaneReads } from './write-check.js';

type Secrets = Readonly<Record<string, string>>;

/** A source write the model accepted: what the store keeps. */
export interface ImportedSource {
  /** What is stored and returned: the body without `secrets`. */
  readonly document: Document;
  /** What becomes of the sealed credentials: undefined keeps them, null drops them, an object replaces them. */
  readonly secrets: Secrets | null | undefined;
}

/** An unknown type takes no credentials; the tenant-wide check names the type. */
const NO_MODEL: SourceModel = { credentials: [], targets: [], operatorOnly: false };

/** `connection.password` → `/connection/password` (RFC 6901). */
const pointerOf = (path: string): string => jsonPointer(path.split('.'));

const quoted = (paths: readonly string[]): string => paths.map((path) => `"${path}"`).join(', ');

/**
 * Credentials only under `secrets`, and only at the type's credential
 * paths: a key elsewhere would be merged over the served options (a `type`
 * or `root` key turned a static source into a files source on `/`), and a
 * credential in the options would be stored in clear, returned and audited.
 */
function credentialErrors(type: string, model: SourceModel, document: Document, written: Secrets | null | undefined) {
  const errors: TenantFieldError[] = [];
  const declared = new Set(model.credentials);
  const which =
    model.credentials.length === 0
      ? `a "${type}" source takes no credentials`
      : `the credentials of a "${type}" source are ${quoted(model.credentials)}`;
  for (const key of Object.keys(written ?? {})) {
    if (!declared.has(key))
      errors.push({ pointer: jsonPointer(['secrets', key]), detail: `not a credential: ${which}` });
  }
  for (const path of model.credentials) {
    if (valueAtPath(document, path) === undefined) continue;
    errors.push({
      pointer: pointerOf(path),
      detail: `a credential: put it under "secrets" as "${path}" (sealed, never returned)`,
    });
  }
  for (const url of model.urls ?? []) {
    const value = valueAtPath(document, url.path);
    if (typeof value !== 'string' || !URL.canParse(value)) continue;
    const parsed = new URL(value);
    if (parsed.password !== '' || (url.passwordParameters ?? []).some((name) => parsed.searchParams.has(name))) {
      errors.push({
        pointer: pointerOf(url.path),
        detail: `carries a password: leave it out of the URL and put it under "secrets" as "${url.password}"`,
      });
    }
  }
  return errors;
}

/** The type and target paths whose values differ between two documents of a source. */
function changedTargets(before: Document, after: Document, model: SourceModel): string[] {
  if (before.type !== after.type) return ['type'];
  return model.targets.filter((path) => !isDeepStrictEqual(valueAtPath(before, path), valueAtPath(after, path)));
}

/** A URL's host as libpq reads it: percent-decoded (`%2Fvar%2Frun%2Fpostgresql` is a socket folder). */
function socketHost(hostname: string): string {
  try {
    return decodeURIComponent(hostname);
  } catch {
    return hostname;
  }
}

const isPath = (host: string): boolean => host.startsWith('/');

/**
 * What only platform operators may configure, judged on the source as it
 * will be served: an operator-only type (the model's field rule for
 * `type`), a source without credentials that would connect with the
 * gateway's own, and files of the gateway's host (Unix sockets, certificate
 * files named in a URL).
 */
function refuseOperatorOnly(model: SourceModel, served: Document, current: Document | undefined): void {
  const type = String(served.type);
  const operators = operatorFieldSet('tenant-admin', 'source', { type: served.type }, model);
  if (operators?.rule.operatorsOnly !== undefined)
    throw new TenantWriteRefusal('forbidden', operators.rule.operatorsOnly);
  // An operator's option (the roles a source may act as) must stay as stored; absent counts as a value too.
  for (const path of model.operatorPaths ?? []) {
    if (isDeepStrictEqual(valueAtPath(served, path), current === undefined ? undefined : valueAtPath(current, path))) {
      continue;
    }
    const rule = fieldRule('source', path, served, model);
    throw new TenantWriteRefusal('forbidden', rule.operatorsOnly ?? `Only platform operators may change "${path}"`, [
      { pointer: pointerOf(path), detail: 'set by a platform operator: leave it as stored' },
    ]);
  }
  if (model.ambientCredentials === true && model.credentials.every((path) => valueAtPath(served, path) === undefined)) {
    throw new TenantWriteRefusal(
      'forbidden',
      `Only platform operators may configure a "${type}" source without credentials: it would connect with the gateway's own`,
      [{ pointer: '/secrets', detail: `give its credentials: ${quoted(model.credentials)}` }],
    );
  }
  const hostOnly = (path: string, detail: string) =>
    new TenantWriteRefusal('forbidden', "Only platform operators may name files of the gateway's host", [
      { pointer: pointerOf(path), detail },
    ]);
  for (const path of model.socketHosts ?? []) {
    const value = valueAtPath(served, path);
    if (typeof value === 'string' && value.startsWith('/')) throw hostOnly(path, 'a Unix socket of the gateway host');
  }
  for (const url of model.urls ?? []) {
    const value = valueAtPath(served, url.path);
    if (typeof value !== 'string' || !URL.canParse(value)) continue;
    const parsed = new URL(value);
    const named = (url.hostFileParameters ?? []).filter((name) => parsed.searchParams.has(name));
    if (named.length > 0) throw hostOnly(url.path, `names files of the gateway's host: ${quoted(named)}`);
    if (url.socketHosts === true && [socketHost(parsed.hostname), parsed.searchParams.get('host') ?? ''].some(isPath)) {
      throw hostOnly(url.path, 'a Unix socket of the gateway host');
    }
  }
}

/** What a source import needs: the source types, and the reads of the write's transaction. */
export interface SourceImportContext {
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  readonly reads: Pick<ControlPlaneReads, 'openSourceSecrets'>;
}

/**
 * The admin API's importer of one source (a PUT body, `secrets` beside the
 * options), checked by its type's model (SourceFactory.model): credentials
 * only under `secrets` and only at credential paths; stored credentials kept
 * only while the type and every target stay as they are (else the write must
 * send them again), and only those the type still declares; operator-only
 * types, host files and the gateway's ambient credentials refused to tenant
 * admins, judged on the source as it will be served. Runs inside the
 * write's transaction against the stored source it replaces (`current`).
 * Throws TenantWriteRefusal; changes nothing.
 */
export async function importSource(
  context: SourceImportContext,
  tenantId: string,
  name: string,
  body: Document,
  writer: EntityWriter,
  current: StoredEntity | undefined,
): Promise<ImportedSource> {
  const { sourceFactories } = context;
  const { secrets: writtenSecrets, ...document } = body;
  const written = writtenSecrets as Secrets | null | undefined;
  const type = String(document.type);
  const factory = sourceFactories.get(type);
  const model = factory?.model ?? NO_MODEL;
  const errors = credentialErrors(type, model, document, written);
  if (errors.length > 0) {
    if (factory === undefined) {
      const known = [...sourceFactories.keys()].join(', ');
      errors.unshift({ pointer: '/type', detail: `unknown source type '${type}'; known types: ${known}` });
    }
    throw new TenantWriteRefusal(
      'validation-failed',
      'Credentials go under "secrets", by the credential paths of the source type, and nowhere else; nothing was changed',
      errors,
    );
  }
  if (Object.hasOwn(document, 'id')) {
    throw new TenantWriteRefusal('validation-failed', 'The path names the source; nothing was changed', [
      { pointer: '/id', detail: 'leave "id" out: the source is the one the path names' },
    ]);
  }
  let secrets = written;
  let kept: Secrets = {};
  if (written === undefined && current !== undefined && current.secretNames.length > 0) {
    const stored = await context.reads.openSourceSecrets(tenantId, name);
    // The credentials the source is served with now, bound to its type and targets.
    const bound = Object.keys(credentialsOf(sourceFactories, current.document.type, stored));
    const changed = changedTargets(current.document, document, model);
    if (bound.length > 0 && changed.length > 0) {
      throw new TenantWriteRefusal(
        'validation-failed',
        `The stored credentials (${quoted(bound)}) may only be sent where they were written for: send "secrets" again with this change (or "secrets": null to drop them); nothing was changed`,
        changed.map((path) => ({
          pointer: pointerOf(path),
          detail: 'changes where the stored credentials would be sent: resend "secrets" with it',
        })),
      );
    }
    // Only what is bound survives; names the type does not declare (sealed before the model
    // bound them) and anything at all across a change of type are dropped.
    if (changed.length === 0) kept = credentialsOf(sourceFactories, document.type, stored);
    if (Object.keys(kept).length < Object.keys(stored).length) secrets = Object.keys(kept).length > 0 ? kept : null;
  }
  const served = servedSourceEntry(sourceFactories, name, document, written === undefined ? kept : (written ?? {}));
  if (writer !== 'operator') refuseOperatorOnly(model, served, current?.document);
  return { document, secrets };
}
