import type { SourceFactory } from '@mcpgw/core';
import { z } from 'zod';
import type { TenantEntry } from './bootstrap-schema.js';
import { tenantDraftSchema, tenantSchema } from './bootstrap-schema.js';
import type { ConfigIssue } from './config-error.js';
import { ConfigError, formatPath } from './config-error.js';
import type { EnvConfig } from './env.js';
import { isLoopbackHost } from './env.js';
import { resolveEnvRefs } from './resolve-env-refs.js';
import type { TenantCompleteness } from './tenant-completeness.js';
import type { TenantConfig } from './tenant-config.js';
import { checkSourcesOfRefusedTenant, checkTenant } from './tenant-rules.js';

export interface ValidationContext {
  readonly env: EnvConfig;
  /** The environment `{ $env: NAME }` references resolve against. */
  readonly rawEnv: NodeJS.ProcessEnv;
  readonly registry: ReadonlyMap<string, SourceFactory>;
  /** Named in errors: a file path, "built-in demo", or "control plane". */
  readonly origin: string;
}

export interface ValidatedBootstrap {
  readonly tenants: TenantConfig[];
  /**
   * The tenants exactly as written (`{ $env: NAME }` references unresolved,
   * defaults not filled in), for the control plane to store: credentials
   * named by reference never reach its database.
   */
  readonly declared: readonly Record<string, unknown>[];
}

/** The document around its tenants; each tenant is parsed on its own, so one refused tenant hides nothing of the others. */
const documentShape = z.strictObject({ tenants: z.array(z.unknown()).min(1, 'declare at least one tenant') });

/**
 * Rules across tenants: unique ids; the development issuer alone and on
 * loopback. `undefined` stands for a tenant its schema refused.
 */
function crossTenantIssues(tenants: ReadonlyArray<TenantEntry | undefined>, env: EnvConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const ids = new Set<string>();
  let devAuthorizationServerAt: string | undefined;
  let realIssuerAt: string | undefined;
  for (const [t, tenant] of tenants.entries()) {
    if (tenant === undefined) continue;
    if (ids.has(tenant.id)) issues.push({ path: `tenants[${t}].id`, message: `duplicate tenant id '${tenant.id}'` });
    ids.add(tenant.id);
    for (const [i, issuer] of (tenant.auth?.issuers ?? []).entries()) {
      if ('development' in issuer) devAuthorizationServerAt ??= `tenants[${t}].auth.issuers[${i}]`;
      else realIssuerAt ??= `tenants[${t}].auth.issuers[${i}]`;
    }
  }
  if (devAuthorizationServerAt === undefined) return issues;
  // The demo login (what the development issuer stands for) is off whenever real issuers are configured.
  if (realIssuerAt !== undefined) {
    issues.push({
      path: devAuthorizationServerAt,
      message: `the development issuer cannot run beside real issuers (${realIssuerAt}); use it only in development configurations`,
    });
  }
  if (!isLoopbackHost(env.HOST)) {
    issues.push({
      path: devAuthorizationServerAt,
      message: `the development issuer is allowed only on a loopback bind, and HOST is ${env.HOST}`,
    });
  }
  return issues;
}

/**
 * Validates a whole bootstrap document in one pass, or throws ConfigError
 * listing every problem with its path: a tenant its schema refuses is
 * reported with its sources' problems, and every other tenant is checked by
 * every rule all the same, so fixing one list of problems never reveals
 * another. Nothing is applied before everything validated.
 */
export async function validateBootstrap(document: unknown, context: ValidationContext): Promise<ValidatedBootstrap> {
  const issues: ConfigIssue[] = [];
  const resolved = resolveEnvRefs(document, context.rawEnv, issues);
  const shape = documentShape.safeParse(resolved);
  if (!shape.success)
    issues.push(...shape.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message })));
  const written = (resolved as { tenants?: unknown } | null)?.tenants;
  const entries: Array<TenantEntry | undefined> = [];
  const tenants: TenantConfig[] = [];
  for (const [t, raw] of (Array.isArray(written) ? written : []).entries()) {
    const entry = await checkTenantEntry(raw, `tenants[${t}]`, context, issues);
    entries.push(entry?.entry);
    if (entry !== undefined) tenants.push(entry.tenant);
  }
  issues.push(...crossTenantIssues(entries, context.env));
  if (issues.length > 0) throw new ConfigError(context.origin, issues);
  // The schema accepted the resolved document, whose shape is the written one's.
  const declared = (document as { tenants: Record<string, unknown>[] }).tenants;
  return { tenants, declared };
}

/**
 * Validates one tenant as the control plane holds it (the bootstrap file's
 * tenant shape, credentials already merged into its sources), or throws
 * ConfigError naming every problem. `being-set-up` admits a tenant without a
 * source or an issuer yet (an admin API write); what comes back is then not
 * to be served.
 */
export async function validateTenantEntry(
  entry: unknown,
  context: ValidationContext,
  completeness: TenantCompleteness = 'served',
): Promise<TenantConfig> {
  const issues: ConfigIssue[] = [];
  const resolved = resolveEnvRefs(entry, context.rawEnv, issues);
  const checked = await checkTenantEntry(resolved, 'tenant', context, issues, completeness);
  if (issues.length > 0 || checked === undefined) throw new ConfigError(context.origin, issues);
  return checked.tenant;
}

/**
 * One tenant (its `$env` references resolved) parsed and checked by every
 * rule, problems appended to `issues` under `at`. A tenant its schema refuses
 * still has its sources checked, and comes back undefined.
 */
async function checkTenantEntry(
  raw: unknown,
  at: string,
  context: ValidationContext,
  issues: ConfigIssue[],
  completeness: TenantCompleteness = 'served',
): Promise<{ entry: TenantEntry; tenant: TenantConfig } | undefined> {
  const parsed = (completeness === 'served' ? tenantSchema : tenantDraftSchema).safeParse(raw);
  if (!parsed.success) {
    issues.push(...parsed.error.issues.map((issue) => ({ path: formatPath(issue.path, at), message: issue.message })));
    await checkSourcesOfRefusedTenant(raw, at, context.registry, issues);
    return undefined;
  }
  return { entry: parsed.data, tenant: await checkTenant(parsed.data, at, context, issues, completeness) };
}
