import { readFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import type { SourceFactory } from '@mcpgw/core';
import { parse as parseYaml } from 'yaml';
import type { ConfigIssue } from './config-error.js';
import { ConfigError } from './config-error.js';
import type { EnvConfig } from './env.js';
import { checkEnv, mergeEnv } from './env.js';
import { envRefNames } from './resolve-env-refs.js';
import type { TenantCompleteness } from './tenant-completeness.js';
import type { TenantConfig } from './tenant-config.js';
import { validateBootstrap, validateTenantEntry } from './validate-bootstrap.js';

export type { SourceConfig, TenantConfig } from './tenant-config.js';

export interface GatewayConfig {
  env: EnvConfig;
  tenants: TenantConfig[];
  /** The tenants as the file wrote them (`$env` references unresolved), for the control plane. */
  declaredTenants: readonly Record<string, unknown>[];
  /**
   * Validates one tenant entry (the bootstrap file's tenant shape) by the same
   * rules and against the same environment as the file: the control plane's
   * tenants go through here before they are served, and every admin API
   * write (`being-set-up`: the tenant may have no source or issuer yet).
   */
  validateTenant(entry: unknown, origin: string, completeness?: TenantCompleteness): Promise<TenantConfig>;
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
 * problem of the environment and of the bootstrap file together. Nothing is
 * applied before everything validated: an invalid file stops startup, it
 * never half-applies.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<GatewayConfig> {
  const rawEnv = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const merged = mergeEnv(rawEnv, options.env === undefined ? cwd : undefined);
  // The file is found before the environment is judged: the variables it names with $env are the operator's own.
  const file = merged.GATEWAY_CONFIG ? resolve(cwd, merged.GATEWAY_CONFIG) : undefined;
  const read = file === undefined ? { document: options.defaultBootstrap.document } : await readBootstrapFile(file);
  const { env, issues: envIssues } = checkEnv(merged, envRefNames(read.document));
  const origin = file ?? 'built-in demo';
  const configDir = file === undefined ? options.defaultBootstrap.configDir : dirname(file);
  const fileIssues = read.issue === undefined ? [] : [read.issue];
  let validated: Awaited<ReturnType<typeof validateBootstrap>> | undefined;
  if (read.issue === undefined) {
    try {
      validated = await validateBootstrap(read.document, { env, rawEnv, registry: options.registry, origin });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      fileIssues.push(...error.issues);
    }
  }
  if (envIssues.length > 0 || fileIssues.length > 0 || validated === undefined) {
    const origins = [...(envIssues.length > 0 ? ['environment'] : []), ...(fileIssues.length > 0 ? [origin] : [])];
    throw new ConfigError(origins.join(' and '), dedupe([...envIssues, ...fileIssues]));
  }
  const validateTenant = (entry: unknown, entryOrigin: string, completeness?: TenantCompleteness) =>
    validateTenantEntry(entry, { env, rawEnv, registry: options.registry, origin: entryOrigin }, completeness);
  return { env, tenants: validated.tenants, declaredTenants: validated.declared, validateTenant, configDir, origin };
}

/** The file's rules about the environment (PUBLIC_URL for authenticated tenants) may repeat one of its own issues. */
function dedupe(issues: readonly ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}\n${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

async function readBootstrapFile(path: string): Promise<{ document?: unknown; issue?: ConfigIssue }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    return { issue: { path: 'env.GATEWAY_CONFIG', message: `cannot read the file ${path} (${code})` } };
  }
  const yaml = ['.yaml', '.yml'].includes(extname(path).toLowerCase());
  try {
    return { document: yaml ? parseYaml(text, { prettyErrors: true }) : JSON.parse(text) };
  } catch (error) {
    return { issue: { path: '(file)', message: `not valid ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message}` } };
  }
}
