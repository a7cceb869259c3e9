import { readFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import type { SourceFactory, UriSpace } from '@mcpgw/core';
import { grantPatternProblem } from '@mcpgw/policy';
import { parse as parseYaml } from 'yaml';
import type { GrantEntry, TenantAuth } from './auth-schema.js';
import { bootstrapSchema } from './bootstrap-schema.js';
import type { ConfigIssue } from './config-error.js';
import { ConfigError, formatPath } from './config-error.js';
import type { EnvConfig } from './env.js';
import { isLoopbackHost, readEnv } from './env.js';
import { resolveEnvRefs } from './resolve-env-refs.js';

export interface SourceConfig {
  id: string;
  type: string;
  /** The output of the source type's options schema. */
  options: unknown;
  /** The entry's `ttlMs` overrides; absent keys keep the source's own. */
  ttl?: { listMs?: number; readMs?: number };
}

export interface TenantConfig {
  id: string;
  name: string;
  /** No authentication at all (loopback development only); then `auth` is absent. */
  anonymous: boolean;
  auth?: TenantAuth | undefined;
  grants: GrantEntry[];
  sources: SourceConfig[];
}

export interface GatewayConfig {
  env: EnvConfig;
  tenants: TenantConfig[];
  /** Directory relative paths in the bootstrap document resolve against. */
  configDir: string;
  /** Where the tenants came from: a file path, or "built-in demo". */
  origin: string;
}

export interface LoadConfigOptions {
  /** Source factories by `type`. */
  registry: ReadonlyMap<string, SourceFactory>;
  /** Used when GATEWAY_CONFIG is unset: the embedded demo. */
  defaultBootstrap: { document: unknown; configDir: string };
  /** Defaults to process.env, with a .env file in cwd filling in missing keys; an explicit env is used as is. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * Loads and validates all configuration, or throws ConfigError listing every
 * problem. Nothing is applied before everything validated: an invalid file
 * stops startup, it never half-applies.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<GatewayConfig> {
  const rawEnv = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const env = readEnv(rawEnv, options.env === undefined ? cwd : undefined);
  let document: unknown;
  let configDir: string;
  let origin: string;
  if (env.GATEWAY_CONFIG === undefined) {
    ({ document, configDir } = options.defaultBootstrap);
    origin = 'built-in demo';
  } else {
    const path = resolve(cwd, env.GATEWAY_CONFIG);
    document = await readBootstrapFile(path);
    configDir = dirname(path);
    origin = path;
  }
  const tenants = await validateBootstrap(document, { env, rawEnv, registry: options.registry, origin });
  return { env, tenants, configDir, origin };
}

async function readBootstrapFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError(path, [{ path: 'env.GATEWAY_CONFIG', message: `cannot read the file (${code})` }]);
  }
  const yaml = ['.yaml', '.yml'].includes(extname(path).toLowerCase());
  try {
    return yaml ? parseYaml(text, { prettyErrors: true }) : JSON.parse(text);
  } catch (error) {
    throw new ConfigError(path, [
      { path: '(file)', message: `not valid ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message}` },
    ]);
  }
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

async function validateBootstrap(
  document: unknown,
  context: { env: EnvConfig; rawEnv: NodeJS.ProcessEnv; registry: ReadonlyMap<string, SourceFactory>; origin: string },
): Promise<TenantConfig[]> {
  const issues: ConfigIssue[] = [];
  const resolved = resolveEnvRefs(document, context.rawEnv, issues);
  const parsed = bootstrapSchema.safeParse(resolved);
  if (!parsed.success) {
    issues.push(...parsed.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message })));
    throw new ConfigError(context.origin, issues);
  }

  const tenants: TenantConfig[] = [];
  const tenantIds = new Set<string>();
  let developmentAt: string | undefined;
  let realIssuerAt: string | undefined;
  const loopback = isLoopbackHost(context.env.HOST);
  for (const [t, tenant] of parsed.data.tenants.entries()) {
    const at = `tenants[${t}]`;
    if (tenantIds.has(tenant.id)) issues.push({ path: `${at}.id`, message: `duplicate tenant id '${tenant.id}'` });
    tenantIds.add(tenant.id);
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
      if (!loopback) {
        issues.push({
          path: `${at}.anonymous`,
          message: `anonymous tenants are allowed only on a loopback bind, and HOST is ${context.env.HOST}`,
        });
      }
    } else if (tenant.auth === undefined) {
      issues.push({
        path: `${at}.auth`,
        message:
          'declare the identity providers this tenant trusts (auth.issuers), or "anonymous": true for loopback development',
      });
    } else {
      const seen = new Set<string>();
      for (const [i, issuer] of tenant.auth.issuers.entries()) {
        const iat = `${at}.auth.issuers[${i}]`;
        const key = 'development' in issuer ? 'development' : issuer.issuer;
        if (seen.has(key)) issues.push({ path: iat, message: `issuer ${key} is listed twice` });
        seen.add(key);
        if ('development' in issuer) developmentAt ??= iat;
        else realIssuerAt ??= iat;
      }
      if (context.env.PORT === 0 && context.env.PUBLIC_URL === undefined) {
        issues.push({
          path: 'env.PUBLIC_URL',
          message: `tenant '${tenant.id}' binds tokens to its URL: set PUBLIC_URL or a fixed PORT`,
        });
      }
    }
    const grantNames = new Set<string>();
    const sourceIdsDeclared = new Set(tenant.sources.map((source) => source.id));
    for (const [g, grant] of tenant.grants.entries()) {
      if (grantNames.has(grant.name)) {
        issues.push({ path: `${at}.grants[${g}].name`, message: `duplicate grant name '${grant.name}'` });
      }
      grantNames.add(grant.name);
      for (const [a, allow] of grant.allow.entries()) {
        if (!sourceIdsDeclared.has(allow.source)) {
          issues.push({
            path: `${at}.grants[${g}].allow[${a}].source`,
            message: `no source '${allow.source}' in this tenant; sources: ${[...sourceIdsDeclared].join(', ')}`,
          });
        }
      }
    }
    const sources: SourceConfig[] = [];
    const sourceIds = new Set<string>();
    for (const [s, entry] of tenant.sources.entries()) {
      const sat = `${at}.sources[${s}]`;
      const { id, type, ttlMs, ...rest } = entry;
      if (sourceIds.has(id)) issues.push({ path: `${sat}.id`, message: `duplicate source id '${id}' in this tenant` });
      sourceIds.add(id);
      const factory = context.registry.get(type);
      if (factory === undefined) {
        issues.push({
          path: `${sat}.type`,
          message: `unknown source type '${type}'; known types: ${[...context.registry.keys()].join(', ')}`,
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
      const ttl = {
        ...(ttlMs?.list === undefined ? {} : { listMs: ttlMs.list }),
        ...(ttlMs?.read === undefined ? {} : { readMs: ttlMs.read }),
      };
      sources.push({ id, type, options: result.value, ...(ttlMs === undefined ? {} : { ttl }) });
    }
    issues.push(...grantPatternIssues(tenant.grants, sources, context.registry, at));
    tenants.push({
      id: tenant.id,
      name: tenant.name ?? tenant.id,
      anonymous: tenant.anonymous,
      auth: tenant.auth,
      grants: tenant.grants,
      sources,
    });
  }
  if (developmentAt !== undefined) {
    // Issue 3: the development authorization server is off whenever real issuers are configured.
    if (realIssuerAt !== undefined) {
      issues.push({
        path: developmentAt,
        message: `the development issuer cannot run beside real issuers (${realIssuerAt}); use it only in development configurations`,
      });
    }
    if (!loopback) {
      issues.push({
        path: developmentAt,
        message: `the development issuer is allowed only on a loopback bind, and HOST is ${context.env.HOST}`,
      });
    }
  }
  if (issues.length > 0) throw new ConfigError(context.origin, issues);
  return tenants;
}
