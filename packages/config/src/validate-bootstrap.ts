import type { SourceFactory } from '@mcpgw/core';
import type { z } from 'zod';
import type { TenantEntry } from './bootstrap-schema.js';
import { bootstrapSchema, tenantSchema } from './bootstrap-schema.js';
import type { ConfigIssue } from './config-error.js';
import { ConfigError, formatPath } from './config-error.js';
import type { EnvConfig } from './env.js';
import { isLoopbackHost } from './env.js';
import { resolveEnvRefs } from './resolve-env-refs.js';
import type { TenantConfig } from './tenant-config.js';
import { checkTenant } from './tenant-rules.js';

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

/** Rules across tenants: unique ids; the development issuer alone and on loopback. */
function crossTenantIssues(tenants: readonly TenantEntry[], env: EnvConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const ids = new Set<string>();
  let devAuthorizationServerAt: string | undefined;
  let realIssuerAt: string | undefined;
  for (const [t, tenant] of tenants.entries()) {
    if (ids.has(tenant.id)) issues.push({ path: `tenants[${t}].id`, message: `duplicate tenant id '${tenant.id}'` });
    ids.add(tenant.id);
    for (const [i, issuer] of (tenant.auth?.issuers ?? []).entries()) {
      if ('development' in issuer) devAuthorizationServerAt ??= `tenants[${t}].auth.issuers[${i}]`;
      else realIssuerAt ??= `tenants[${t}].auth.issuers[${i}]`;
    }
  }
  if (devAuthorizationServerAt === undefined) return issues;
  // The development authorization server is off whenever real issuers are configured.
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
 * Validates a whole bootstrap document, or throws ConfigError listing every
 * problem with its path. Nothing is applied before everything validated.
 */
export async function validateBootstrap(document: unknown, context: ValidationContext): Promise<ValidatedBootstrap> {
  const issues: ConfigIssue[] = [];
  const resolved = parseResolved(bootstrapSchema, document, context, issues);
  const tenants: TenantConfig[] = [];
  for (const [t, tenant] of resolved.tenants.entries()) {
    tenants.push(await checkTenant(tenant, `tenants[${t}]`, context, issues));
  }
  issues.push(...crossTenantIssues(resolved.tenants, context.env));
  if (issues.length > 0) throw new ConfigError(context.origin, issues);
  // The schema accepted the resolved document, whose shape is the written one's.
  const declared = (document as { tenants: Record<string, unknown>[] }).tenants;
  return { tenants, declared };
}

/**
 * Validates one tenant as the control plane holds it (the bootstrap file's
 * tenant shape, credentials already merged into its sources), or throws
 * ConfigError naming every problem.
 */
export async function validateTenantEntry(entry: unknown, context: ValidationContext): Promise<TenantConfig> {
  const issues: ConfigIssue[] = [];
  const parsed = parseResolved(tenantSchema, entry, context, issues);
  const tenant = await checkTenant(parsed, 'tenant', context, issues);
  if (issues.length > 0) throw new ConfigError(context.origin, issues);
  return tenant;
}

/**
 * `value` with its `$env` references resolved (problems go to `issues`),
 * parsed by `schema`; throws ConfigError listing every problem when the
 * shape is wrong, before any rule looks at it.
 */
function parseResolved<S extends z.ZodType>(
  schema: S,
  value: unknown,
  context: ValidationContext,
  issues: ConfigIssue[],
): z.output<S> {
  const parsed = schema.safeParse(resolveEnvRefs(value, context.rawEnv, issues));
  if (!parsed.success) {
    issues.push(...parsed.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message })));
    throw new ConfigError(context.origin, issues);
  }
  return parsed.data;
}
