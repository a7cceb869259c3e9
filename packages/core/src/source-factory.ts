import type { Logger } from './logger.js';
import type { Source } from './source.js';
import type { StandardSchemaV1 } from './standard-schema.js';

/**
 * How a source type plugs into the gateway. The app registers one factory per
 * `type`; the config loader validates each source entry of the bootstrap file
 * against `optionsSchema` (so errors name the exact bad path) before any
 * source is created, and only then calls `create`.
 */
export interface SourceFactory<Options = unknown> {
  /** The `type` value in the bootstrap file, e.g. `"files"`. */
  readonly type: string;
  /**
   * Validates a source entry of the bootstrap file minus its `id` and `type`
   * keys. Should reject unknown keys so typos fail at startup.
   */
  readonly optionsSchema: StandardSchemaV1<unknown, Options>;
  create(options: Options, context: SourceContext): Source | Promise<Source>;
}

export interface SourceContext {
  /** The source's id, unique within its tenant. */
  readonly sourceId: string;
  readonly tenantId: string;
  /** Directory of the bootstrap file, for resolving relative paths. */
  readonly configDir: string;
  /** Already bound to tenant and source. */
  readonly logger: Logger;
}
