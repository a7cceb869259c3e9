import type { ControlPlaneReads, Document, StoredEntity, TenantEntityKind } from '@mcpgw/control-plane';
import type { ConfigIssue } from '@mcpgw/config';
import { ConfigError } from '@mcpgw/config';
import { servedSourceEntry } from '@mcpgw/tenancy';
import type { AdminDeps } from './admin-route.js';
import type { ProblemFieldError } from './problem.js';
import { AdminProblem, jsonPointer } from './problem.js';

/** A write the admin API is about to make, checked against the tenant it would produce. */
export type CandidateChange =
  | {
      readonly kind: TenantEntityKind;
      readonly name: string;
      /** `null`: the entity is being deleted. */
      readonly document: Document | null;
      /** Sources: credentials the write stores (undefined keeps the stored ones, null removes them). */
      readonly secrets?: Readonly<Record<string, string>> | null;
    }
  | { readonly kind: 'settings'; readonly settings: Document };

/** Where each kind sits in the bootstrap file's tenant, and the key its name goes under. */
const PLACES: Record<TenantEntityKind, { list: string; nameKey?: string }> = {
  issuer: { list: 'auth.issuers' },
  source: { list: 'sources', nameKey: 'id' },
  grant: { list: 'grants', nameKey: 'name' },
  'admin-role-binding': { list: 'adminRoleBindings', nameKey: 'name' },
};

const KINDS = Object.keys(PLACES) as TenantEntityKind[];

// Stand-ins for what a tenant being set up does not have yet (a source, an
// issuer), so that everything else it holds is still checked by every rule.
const PLACEHOLDER_SOURCE = 'placeholder-source-of-an-incomplete-tenant';
const PLACEHOLDER_ISSUER = 'https://placeholder-issuer-of-an-incomplete-tenant.invalid';

/** Where a change lands in the entity's list: its current place, or the end. */
function applied(
  kind: TenantEntityKind,
  entities: StoredEntity[],
  change: CandidateChange,
): { name: string; document: Document }[] {
  const list = entities.map((entity) => ({ name: entity.name, document: entity.document }));
  if (change.kind !== kind) return list;
  const at = list.findIndex((entity) => entity.name === change.name);
  if (change.document === null) return list.filter((entity) => entity.name !== change.name);
  if (at === -1) return [...list, { name: change.name, document: change.document }];
  list[at] = { name: change.name, document: change.document };
  return list;
}

/**
 * The tenant in the bootstrap file's shape as it would be after `change`,
 * sources' credentials merged in exactly as the gateway will serve them
 * (servedSourceEntry), for
 * `validateTenant`. Never leaves this module's callers: it holds credentials.
 * `deps.store` reads through the write's own transaction: what it reads is what commits.
 */
async function candidateEntry(
  deps: Omit<AdminDeps, 'store'> & { readonly store: ControlPlaneReads },
  tenantId: string,
  settings: Document,
  change: CandidateChange,
): Promise<{ entry: Document; indexOf: (kind: TenantEntityKind, name: string) => number }> {
  // One read at a time: they share the write's one connection, which runs a
  // query at a time anyway (node-postgres deprecates queueing them on it).
  const lists = {} as Record<TenantEntityKind, { name: string; document: Document }[]>;
  for (const kind of KINDS) lists[kind] = applied(kind, await deps.store.listEntities(tenantId, kind), change);
  const sources: Document[] = [];
  for (const { name, document } of lists.source) {
    const changing = change.kind === 'source' && change.name === name;
    const secrets =
      changing && change.secrets !== undefined
        ? (change.secrets ?? {})
        : changing && (await deps.store.getEntity(tenantId, 'source', name)) === undefined
          ? {}
          : await deps.store.openSourceSecrets(tenantId, name);
    // Merged as the gateway will serve it: at the type's credential paths only.
    sources.push(servedSourceEntry(deps.sourceFactories, name, document, secrets));
  }
  const { auth, ...rest } = settings;
  const issuers = lists.issuer.map(({ document }) => document);
  const entry: Document = {
    ...rest,
    id: tenantId,
    grants: lists.grant.map(({ name, document }) => ({ name, ...document })),
    sources: sources.length > 0 ? sources : [{ id: PLACEHOLDER_SOURCE, type: 'static', resources: [] }],
    adminRoleBindings: lists['admin-role-binding'].map(({ name, document }) => ({ name, ...document })),
  };
  if (settings.anonymous !== true || auth !== undefined || issuers.length > 0) {
    entry.auth = {
      ...(auth !== null && typeof auth === 'object' ? (auth as Document) : {}),
      issuers: issuers.length > 0 ? issuers : [{ issuer: PLACEHOLDER_ISSUER, jwks: { keys: [{ kty: 'EC' }] } }],
    };
  }
  return { entry, indexOf: (kind, name) => lists[kind].findIndex((item) => item.name === name) };
}

/** `sources[1].root` → `['sources', 1, 'root']`. */
function segments(path: string): (string | number)[] {
  return path
    .split(/\.|(\[\d+\])/)
    .filter((part) => part !== undefined && part !== '')
    .map((part) => (/^\[\d+\]$/.test(part) ? Number(part.slice(1, -1)) : part));
}

/** One configuration issue as a field error: a pointer into the request body when it is about what was written. */
function fieldError(
  issue: ConfigIssue,
  change: CandidateChange,
  index: number,
  secretNames: Set<string>,
): ProblemFieldError {
  const path = issue.path.replace(/^tenant(\.|$)/, '');
  const parts = segments(path);
  if (change.kind === 'settings') {
    const owned =
      ['sources', 'grants', 'adminRoleBindings'].includes(String(parts[0])) || path.startsWith('auth.issuers');
    return owned || path.startsWith('env.')
      ? { detail: issue.message, location: path }
      : { detail: issue.message, pointer: jsonPointer(parts) };
  }
  const place = segments(PLACES[change.kind].list);
  const inEntity = place.every((key, i) => parts[i] === key) && parts[place.length] === index;
  if (!inEntity) return { detail: issue.message, location: path || '(tenant)' };
  const rest = parts.slice(place.length + 1);
  if (rest.length > 0 && rest[0] === PLACES[change.kind].nameKey) return { detail: issue.message, parameter: 'name' };
  const dotted = rest.join('.');
  for (const name of secretNames) {
    if (dotted === name || dotted.startsWith(`${name}.`)) return { detail: issue.message, pointer: `/secrets/${name}` };
  }
  return { detail: issue.message, pointer: jsonPointer(rest) };
}

/** Issues name the stand-ins where they list what the tenant has: say "none" instead. */
const withoutPlaceholders = (issue: ConfigIssue): ConfigIssue => ({
  path: issue.path,
  message: issue.message.replaceAll(PLACEHOLDER_SOURCE, '(none)').replaceAll(PLACEHOLDER_ISSUER, '(none)'),
});

/**
 * Checks the tenant a write produces by the bootstrap file's rules
 * (GatewayConfig.validateTenant): a refused write is a 422 naming every
 * offending field, and changes nothing. A tenant still being set up (no
 * source or no issuer yet) is checked with stand-ins for what it lacks, so
 * that it can be built one write at a time.
 *
 * It is the write's check (the store's `check` option), reading through the
 * write's transaction once the tenant is locked and the change made: rules
 * across entities (a grant names a source, the sign-in names an issuer) hold
 * for the tenant that commits, even when another admin changes the same
 * tenant at the same moment; that writer waits for the lock, and its own
 * check sees this change.
 */
export async function checkCandidate(
  // Not the store: inside the write's transaction every read goes through `reads`
  // (PGlite's one connection is the transaction's until it ends).
  deps: Omit<AdminDeps, 'store'>,
  reads: ControlPlaneReads,
  tenantId: string,
  change: CandidateChange,
): Promise<void> {
  const settings = change.kind === 'settings' ? change.settings : ((await reads.getTenant(tenantId))?.document ?? {});
  const { entry, indexOf } = await candidateEntry({ ...deps, store: reads }, tenantId, settings, change);
  try {
    await deps.validateTenant(entry, 'admin API');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const index = change.kind === 'settings' ? -1 : indexOf(change.kind, change.name);
    const secretNames = new Set(change.kind === 'source' && change.secrets ? Object.keys(change.secrets) : []);
    const errors = error.issues.map(withoutPlaceholders).map((issue) => fieldError(issue, change, index, secretNames));
    if (errors.length === 0) return;
    throw new AdminProblem(
      'validation-failed',
      'The tenant would not be valid after this change; nothing was changed',
      errors,
    );
  }
}

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
        throw new AdminProblem('validation-failed', 'Environment references are for the bootstrap file only', [
          { pointer: jsonPointer([...path, key]), detail: 'write the value itself (credentials under "secrets")' },
        ]);
      }
      refuseEnvReferences(item, [...path, key]);
    }
  }
}
