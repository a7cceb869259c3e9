import { isDeepStrictEqual } from 'node:util';
import type { Document, StoredEntity } from '@mcpgw/control-plane';
import { valueAtPath, type SourceModel } from '@mcpgw/core';
import { credentialsOf, servedSourceEntry } from '@mcpgw/tenancy';
import type { AdminDeps } from './admin-route.js';
import type { AdminPrincipal } from './admin-principal.js';
import type { ProblemFieldError } from './problem.js';
import { AdminProblem, jsonPointer } from './problem.js';

type Secrets = Readonly<Record<string, string>>;

/** A source write the admin API accepted, before the tenant-wide checks (checkCandidate) and the store. */
export interface SourceWrite {
  /** What is stored and returned: the body without `secrets`. */
  readonly document: Document;
  /** What becomes of the sealed credentials: undefined keeps them, null drops them, an object replaces them. */
  readonly secrets: Secrets | null | undefined;
  /**
   * The source as the gateway will serve it (credentials merged in): what
   * every policy check looks at. Holds credentials: never for a response or
   * a log line.
   */
  readonly served: Document;
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
  const errors: ProblemFieldError[] = [];
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
    if (valueAtPath(document, path) !== undefined) {
      errors.push({
        pointer: pointerOf(path),
        detail: `a credential: put it under "secrets" as "${path}" (sealed, never returned)`,
      });
    }
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

/** What only platform operators may configure, judged on the source as it will be served. */
function refuseOperatorOnly(deps: AdminDeps, served: Document): void {
  const type = String(served.type);
  const model = deps.sourceFactories.get(type)?.model ?? NO_MODEL;
  if (model.operatorOnly) {
    throw new AdminProblem('forbidden', `Only platform operators may configure "${type}" sources`);
  }
  if (model.ambientCredentials === true && model.credentials.every((path) => valueAtPath(served, path) === undefined)) {
    throw new AdminProblem(
      'forbidden',
      `Only platform operators may configure a "${type}" source without credentials: it would connect with the gateway's own`,
      [{ pointer: '/secrets', detail: `give its credentials: ${quoted(model.credentials)}` }],
    );
  }
  const hostOnly = (path: string, detail: string) =>
    new AdminProblem('forbidden', "Only platform operators may name files of the gateway's host", [
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
 * Checks a source write by the source type's model (SourceFactory.model)
 * and works out what will be served: credentials only under `secrets` and
 * only at credential paths; stored credentials kept only while the type
 * and every target stay as they are (else the write must send them again),
 * and only those the type still declares; operator-only types, host files
 * and the gateway's ambient credentials refused to tenant admins, judged on
 * the source as it will be served. Throws an AdminProblem; changes nothing.
 */
export async function sourceWrite(
  deps: AdminDeps,
  tenantId: string,
  name: string,
  body: Document,
  principal: AdminPrincipal | undefined,
  current: StoredEntity | undefined,
): Promise<SourceWrite> {
  const { secrets: writtenSecrets, ...document } = body;
  const written = writtenSecrets as Secrets | null | undefined;
  const type = String(document.type);
  const factory = deps.sourceFactories.get(type);
  const errors = credentialErrors(type, factory?.model ?? NO_MODEL, document, written);
  if (errors.length > 0) {
    if (factory === undefined) {
      const known = [...deps.sourceFactories.keys()].join(', ');
      errors.unshift({ pointer: '/type', detail: `unknown source type '${type}'; known types: ${known}` });
    }
    throw new AdminProblem(
      'validation-failed',
      'Credentials go under "secrets", by the credential paths of the source type, and nowhere else; nothing was changed',
      errors,
    );
  }
  if (Object.hasOwn(document, 'id')) {
    throw new AdminProblem('validation-failed', 'The path names the source; nothing was changed', [
      { pointer: '/id', detail: 'leave "id" out: the source is the one the path names' },
    ]);
  }
  let secrets = written;
  let kept: Secrets = {};
  if (written === undefined && current !== undefined && current.secretNames.length > 0) {
    const stored = await deps.store.openSourceSecrets(tenantId, name);
    // The credentials the source is served with now, bound to its type and targets.
    const bound = Object.keys(credentialsOf(deps.sourceFactories, current.document.type, stored));
    const changed = changedTargets(current.document, document, factory?.model ?? NO_MODEL);
    if (bound.length > 0 && changed.length > 0) {
      throw new AdminProblem(
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
    if (changed.length === 0) kept = credentialsOf(deps.sourceFactories, document.type, stored);
    if (Object.keys(kept).length < Object.keys(stored).length) secrets = Object.keys(kept).length > 0 ? kept : null;
  }
  const served = servedSourceEntry(
    deps.sourceFactories,
    name,
    document,
    written === undefined ? kept : (written ?? {}),
  );
  if (principal?.kind !== 'operator') refuseOperatorOnly(deps, served);
  return { document, secrets, served };
}
