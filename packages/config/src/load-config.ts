import { readFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import type { SourceFactory } from '@mcpgw/core';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './config-error.js';
import type { EnvConfig } from './env.js';
import { readEnv } from './env.js';
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
   * tenants go through here before they are served.
   */
  validateTenant(entry: unknown, origin: string): Promise<TenantConfig>;
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
  const { tenants, declared } = await validateBootstrap(document, { env, rawEnv, registry: options.registry, origin });
  const validateTenant = (entry: unknown, entryOrigin: string) =>
    validateTenantEntry(entry, { env, rawEnv, registry: options.registry, origin: entryOrigin });
  return { env, tenants, declaredTenants: declared, validateTenant, configDir, origin };
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
