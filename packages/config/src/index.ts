export { ConfigError } from './config-error.js';
export type { ConfigIssue } from './config-error.js';
export { ENV_KEYS, envSchema, isLoopbackHost, readEnv } from './env.js';
export type { EnvConfig } from './env.js';
export { bootstrapSchema } from './bootstrap-schema.js';
export type { BootstrapDocument } from './bootstrap-schema.js';
export { loadConfig } from './load-config.js';
export type { GatewayConfig, LoadConfigOptions, SourceConfig, TenantConfig } from './load-config.js';
