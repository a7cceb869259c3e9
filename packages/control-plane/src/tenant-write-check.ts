import type { ConfigIssue, TenantCompleteness, TenantConfig } from '@mcpgw/config';
import { ConfigError } from '@mcpgw/config';
import type { SourceFactory } from '@mcpgw/core';
import { jsonPointer } from '@mcpgw/core';
import type { TenantEntityKind } from './entity-rows.js';
import { servedTenantEntry } from './served-tenant.js';
import { readStoredTenant } from './stored-tenant.js';
import type { TenantFieldError } from './tenant-write-refusal.js';
import { TenantWriteRefusal } from './tenant-write-refusal.js';
import type { ControlPlaneReads } from './write-check.js';

/** What a write changed, so that a refusal points at what the request sent. */
export type TenantWriteTarget =
  | {
      readonly kind: TenantEntityKind;
      readonly name: string;
      /** Sources: the credential names the write sent under `secrets`. */
      readonly secretNames?: readonly string[];
    }
  | { readonly kind: 'settings' };

/** The bootstrap file's rules for one tenant (GatewayConfig.validateTenant). */
export type ValidateTenant = (
  entry: unknown,
  origin: string,
  completeness?: TenantCompleteness,
) => Promise<TenantConfig>;

/** What the check needs beyond the write's transaction. */
export interface TenantWriteCheckContext {
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  readonly validateTenant: ValidateTenant;
}

/** Where each kind sits in the bootstrap file's tenant, and the key its name goes under. */
const PLACES: Record<Exclude<TenantEntityKind, 'authorization-server'>, { list: string; nameKey?: string }> = {
  issuer: { list: 'auth.issuers' },
  source: { list: 'sources', nameKey: 'id' },
  grant: { list: 'grants', nameKey: 'name' },
  'admin-role-binding': { list: 'adminRoleBindings', nameKey: 'name' },
};

/** Where the singleton authorization server sits in the bootstrap file's tenant. */
const AUTHORIZATION_SERVER_PLACE = 'authorizationServer';

/** `sources[1].root` → `['sources', 1, 'root']`. */
function segments(path: string): (string | number)[] {
  return path
    .split(/\.|(\[\d+\])/)
    .filter((part) => part !== undefined && part !== '')
    .map((part) => (/^\[\d+\]$/.test(part) ? Number(part.slice(1, -1)) : part));
}

/** One configuration issue as a field error: a pointer into the request body when it is about what was written. */
function fieldError(issue: ConfigIssue, target: TenantWriteTarget, index: number): TenantFieldError {
  const path = issue.path.replace(/^tenant(\.|$)/, '');
  const parts = segments(path);
  if (target.kind === 'settings') {
    const owned =
      ['sources', 'grants', 'adminRoleBindings'].includes(String(parts[0])) || path.startsWith('auth.issuers');
    return owned || path.startsWith('env.')
      ? { detail: issue.message, location: path }
      : { detail: issue.message, pointer: jsonPointer(parts) };
  }
  if (target.kind === 'authorization-server') {
    return parts[0] === AUTHORIZATION_SERVER_PLACE
      ? { detail: issue.message, pointer: jsonPointer(parts.slice(1)) }
      : { detail: issue.message, location: path || '(tenant)' };
  }
  const place = segments(PLACES[target.kind].list);
  const inEntity = place.every((key, i) => parts[i] === key) && parts[place.length] === index;
  if (!inEntity) return { detail: issue.message, location: path || '(tenant)' };
  const rest = parts.slice(place.length + 1);
  if (rest.length > 0 && rest[0] === PLACES[target.kind].nameKey) return { detail: issue.message, parameter: 'name' };
  const dotted = rest.join('.');
  for (const name of target.secretNames ?? []) {
    if (dotted === name || dotted.startsWith(`${name}.`)) return { detail: issue.message, pointer: `/secrets/${name}` };
  }
  return { detail: issue.message, pointer: jsonPointer(rest) };
}

const LISTS = {
  issuer: 'issuers',
  source: 'sources',
  grant: 'grants',
  'admin-role-binding': 'adminRoleBindings',
} as const satisfies Record<Exclude<TenantEntityKind, 'authorization-server'>, string>;

/**
 * Checks the tenant a write leaves, as it will be served, by the bootstrap
 * file's rules (servedTenantEntry, then GatewayConfig.validateTenant): a
 * refusal is a TenantWriteRefusal naming every offending field, and since it
 * runs as the write's check (the store's `check` option, reading through the
 * write's transaction once the tenant is locked and the change made), the
 * write rolls back and nothing changes. Rules across entities (a grant names
 * a source, the sign-in names an issuer) hold for the tenant that commits,
 * even when another admin changes the same tenant at the same moment: that
 * writer waits for the lock, and its own check sees this change. A tenant
 * still being set up (no source or no issuer yet) is valid in the model
 * itself (`being-set-up`), so it can be built one write at a time.
 */
export async function checkTenantWrite(
  context: TenantWriteCheckContext,
  reads: ControlPlaneReads,
  tenantId: string,
  target: TenantWriteTarget,
): Promise<void> {
  const tenant = await readStoredTenant(reads, tenantId);
  if (tenant === undefined) return;
  try {
    await context.validateTenant(servedTenantEntry(tenant, context.sourceFactories), 'admin API', 'being-set-up');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const index =
      target.kind === 'settings' || target.kind === 'authorization-server'
        ? -1
        : tenant[LISTS[target.kind]].findIndex((item) => item.name === target.name);
    const errors = error.issues.map((issue) => fieldError(issue, target, index));
    if (errors.length === 0) return;
    throw new TenantWriteRefusal(
      'validation-failed',
      'The tenant would not be valid after this change; nothing was changed',
      errors,
    );
  }
}
