import { silentLogger, type Source, type SourceContext, type StandardSchemaV1 } from '@mcpgw/core';
import { staticSourceFactory } from '../src/static-source-factory.js';
import type { StaticSourceConfig } from '../src/static-source-options.js';

export const context: SourceContext = {
  sourceId: 'fixtures',
  tenantId: 'acme',
  configDir: '/nonexistent',
  logger: silentLogger,
};

/** Validates `config` the way the config loader does, or returns the issues. */
export async function validate(config: unknown) {
  return staticSourceFactory.optionsSchema['~standard'].validate(config) as ReturnType<
    StandardSchemaV1['~standard']['validate']
  >;
}

/** Validates `config` and creates the source; fails the test on a schema issue. */
export async function createSource(config: StaticSourceConfig): Promise<Source> {
  const result = await staticSourceFactory.optionsSchema['~standard'].validate(config);
  if (result.issues !== undefined) throw new Error(`invalid options: ${JSON.stringify(result.issues)}`);
  return staticSourceFactory.create(result.value, context);
}

/** Issues of an invalid config as `path: message` strings. */
export async function issuesOf(config: unknown): Promise<string[]> {
  const result = await validate(config);
  if (result.issues === undefined) return [];
  return result.issues.map(
    (i) => `${(i.path ?? []).map((p) => (typeof p === 'object' ? String(p.key) : String(p))).join('.')}: ${i.message}`,
  );
}
