import type { SourceFactory, UriSpace } from '@mcpgw/core';
import { grantPatternProblem } from '@mcpgw/policy';
import { adminSignInIssues } from './admin-sign-in-schema.js';
import { authorizationServerIssues } from './authorization-server-rules.js';
import type { GrantEntry } from './auth-schema.js';
import type { SourceEntry, TenantEntry } from './bootstrap-schema.js';
import { sourceEntrySchema } from './bootstrap-schema.js';
import type { ConfigIssue } from './config-error.js';
import { formatPath } from './config-error.js';
import type { EnvConfig } from './env.js';
import { isLoopbackHost } from './env.js';
import type { TenantCompleteness } from './tenant-completeness.js';
import type { SourceConfig, TenantConfig } from './tenant-config.js';

/** What the rules of one tenant need to know beyond the tenant itself. */
export interface TenantRuleContext {
  readonly env: EnvConfig;
  readonly registry: ReadonlyMap<string, SourceFactory>;
}

/**
 * The issuer of a tenant's hosted authorization server on the canonical base
 * URL (PUBLIC_URL, else http://HOST:PORT), as the gateway serves it
 * (`${base}/t/{tenant}/oauth`, docs/authorization-server.md "Where it lives").
 */
function hostedIssuerOf(tenantId: string, env: EnvConfig): string {
  const host = env.HOST.includes(':') && !env.HOST.startsWith('[') ? `[${env.HOST}]` : env.HOST;
  return `${env.PUBLIC_URL ?? `http://${host}:${env.PORT}`}/t/${tenantId}/oauth`;
}

/** A tenant that authenticates binds tokens to its URL, which a random port does not fix. */
function publicUrlIssues(tenant: TenantEntry, env: EnvConfig): ConfigIssue[] {
  return env.PORT === 0 && env.PUBLIC_URL === undefined
    ? [
        {
          path: 'env.PUBLIC_URL',
          message: `tenant '${tenant.id}' binds tokens to its URL: set PUBLIC_URL or a fixed PORT`,
        },
      ]
    : [];
}

/**
 * Anonymous tenants: loopback only, no auth, no grants. Others: issuers
 * declared once each; a tenant being set up may declare none yet.
 */
function accessIssues(
  tenant: TenantEntry,
  at: string,
  env: EnvConfig,
  completeness: TenantCompleteness,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (tenant.anonymous) {
    if (tenant.auth !== undefined) {
      issues.push({
        path: `${at}.auth`,
        message: 'an anonymous tenant authenticates nobody: remove "auth" or "anonymous"',
      });
    }
    if (tenant.grants.length > 0) {
      issues.push({
        path: `${at}.grants`,
        message: 'an anonymous tenant shows every resource to everyone: grants do not apply',
      });
    }
    if (!isLoopbackHost(env.HOST)) {
      issues.push({
        path: `${at}.anonymous`,
        message: `anonymous tenants are allowed only on a loopback bind, and HOST is ${env.HOST}`,
      });
    }
    return issues;
  }
  if (tenant.auth === undefined) {
    // A hosted authorization server is the issuer the tenant trusts.
    if (completeness === 'being-set-up' || tenant.authorizationServer !== undefined)
      return publicUrlIssues(tenant, env);
    return [
      {
        path: `${at}.auth`,
        message:
          'declare the identity providers this tenant trusts (auth.issuers), or "anonymous": true for loopback development',
      },
    ];
  }
  if (tenant.auth.issuers.length === 0 && completeness === 'served' && tenant.authorizationServer === undefined) {
    issues.push({ path: `${at}.auth.issuers`, message: 'a tenant that authenticates needs at least one issuer' });
  }
  const seen = new Set<string>();
  for (const [i, issuer] of tenant.auth.issuers.entries()) {
    const key = 'development' in issuer ? 'development' : issuer.issuer;
    if (seen.has(key)) issues.push({ path: `${at}.auth.issuers[${i}]`, message: `issuer ${key} is listed twice` });
    seen.add(key);
  }
  issues.push(...publicUrlIssues(tenant, env));
  return issues;
}

/** Grant names are unique and every grant names sources of this tenant. */
function grantIssues(tenant: TenantEntry, at: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const names = new Set<string>();
  const sourceIds = new Set(tenant.sources.map((source) => source.id));
  for (const [g, grant] of tenant.grants.entries()) {
    if (names.has(grant.name))
      issues.push({ path: `${at}.grants[${g}].name`, message: `duplicate grant name '${grant.name}'` });
    names.add(grant.name);
    for (const [a, allow] of grant.allow.entries()) {
      if (!sourceIds.has(allow.source)) {
        issues.push({
          path: `${at}.grants[${g}].allow[${a}].source`,
          message: `no source '${allow.source}' in this tenant; sources: ${[...sourceIds].join(', ') || '(none)'}`,
        });
      }
    }
  }
  return issues;
}

/**
 * Each source has a unique id, a known type and options its type accepts.
 * Entries without the shape of a source (`undefined`: their tenant's schema
 * issues name them) are skipped; the others are checked all the same.
 */
async function validateSources(
  entries: ReadonlyArray<SourceEntry | undefined>,
  at: string,
  registry: ReadonlyMap<string, SourceFactory>,
  issues: ConfigIssue[],
): Promise<SourceConfig[]> {
  const sources: SourceConfig[] = [];
  const ids = new Set<string>();
  for (const [s, entry] of entries.entries()) {
    if (entry === undefined) continue;
    const sat = `${at}.sources[${s}]`;
    const { id, type, ttlMs, ...rest } = entry;
    if (ids.has(id)) issues.push({ path: `${sat}.id`, message: `duplicate source id '${id}' in this tenant` });
    ids.add(id);
    const factory = registry.get(type);
    if (factory === undefined) {
      issues.push({
        path: `${sat}.type`,
        message: `unknown source type '${type}'; known types: ${[...registry.keys()].join(', ')}`,
      });
      continue;
    }
    const result = await factory.optionsSchema['~standard'].validate(rest);
    if (result.issues !== undefined) {
      issues.push(
        ...result.issues.map((issue) => ({ path: formatPath(issue.path ?? [], sat), message: issue.message })),
      );
      continue;
    }
    sources.push({ id, type, options: result.value, ...(ttlMs === undefined ? {} : { ttlMs }) });
  }
  return sources;
}

/**
 * The sources of a tenant its schema refused (the schema's issues are
 * reported already): every entry with the shape of a source still has its
 * type and options checked, so one run names those problems too.
 */
export async function checkSourcesOfRefusedTenant(
  tenant: unknown,
  at: string,
  registry: ReadonlyMap<string, SourceFactory>,
  issues: ConfigIssue[],
): Promise<void> {
  const sources = typeof tenant === 'object' && tenant !== null ? (tenant as { sources?: unknown }).sources : undefined;
  if (!Array.isArray(sources)) return;
  await validateSources(
    sources.map((entry) => sourceEntrySchema.safeParse(entry).data),
    at,
    registry,
    issues,
  );
}

/**
 * Refuses URI patterns that no URI of their source could ever match (a wrong
 * scheme or authority, a doubled slash, another source's id): such a grant
 * silently shows nothing. Sources whose type declares no URI space, or whose
 * options failed validation, are not checked here.
 */
function grantPatternIssues(
  grants: readonly GrantEntry[],
  sources: readonly SourceConfig[],
  registry: ReadonlyMap<string, SourceFactory>,
  at: string,
): ConfigIssue[] {
  const spaces = new Map<string, UriSpace>();
  for (const source of sources) {
    const space = registry.get(source.type)?.uriSpace?.(source.options, source.id);
    if (space !== undefined) spaces.set(source.id, space);
  }
  const issues: ConfigIssue[] = [];
  for (const [g, grant] of grants.entries()) {
    for (const [a, allow] of grant.allow.entries()) {
      const space = spaces.get(allow.source);
      if (space === undefined) continue;
      for (const [u, pattern] of (allow.uris ?? []).entries()) {
        const problem = grantPatternProblem(pattern, space, allow.source);
        if (problem !== undefined) {
          issues.push({
            path: `${at}.grants[${g}].allow[${a}].uris[${u}]`,
            message: `'${pattern}' can never match: ${problem}`,
          });
        }
      }
    }
  }
  return issues;
}

/**
 * Every rule about one tenant on its own, whether it comes from the bootstrap
 * file or the control plane (`being-set-up`: it may lack a source or an issuer yet). Problems are appended to `issues` with paths
 * under `at`; the tenant's runtime configuration comes back either way (with
 * the sources that validated), and is used only when `issues` stayed empty.
 */
export async function checkTenant(
  tenant: TenantEntry,
  at: string,
  context: TenantRuleContext,
  issues: ConfigIssue[],
  completeness: TenantCompleteness = 'served',
): Promise<TenantConfig> {
  issues.push(...accessIssues(tenant, at, context.env, completeness), ...grantIssues(tenant, at));
  issues.push(
    ...adminSignInIssues(
      tenant.adminSignIn,
      tenant.auth?.issuers ?? [],
      at,
      completeness,
      tenant.authorizationServer === undefined ? undefined : hostedIssuerOf(tenant.id, context.env),
    ),
  );
  issues.push(...authorizationServerIssues(tenant, at, context.env));
  const sources = await validateSources(tenant.sources, at, context.registry, issues);
  issues.push(...grantPatternIssues(tenant.grants, sources, context.registry, at));
  return {
    id: tenant.id,
    name: tenant.name ?? tenant.id,
    anonymous: tenant.anonymous,
    // A tenant with a hosted authorization server authenticates even without issuers of its own:
    // an `auth` with none, so its runtime has an authenticator (fails closed) and never counts as anonymous.
    auth: tenant.auth ?? (tenant.authorizationServer === undefined ? undefined : { issuers: [], requiredScopes: [] }),
    grants: tenant.grants,
    sources,
    ...(tenant.limits === undefined ? {} : { limits: tenant.limits }),
    ...(tenant.adminSignIn === undefined ? {} : { adminSignIn: tenant.adminSignIn }),
    ...(tenant.authorizationServer === undefined ? {} : { authorizationServer: tenant.authorizationServer }),
  };
}
