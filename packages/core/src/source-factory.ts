import type { EgressGuard } from './egress-guard.js';
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
  /**
   * Where the URIs of a source of this type (given its id and validated
   * options) can lie, so the config loader refuses a grant URI pattern that
   * could never match one of them. Absent: patterns are not checked.
   */
  uriSpace?(options: Options, sourceId: string): UriSpace;
}

/** The shape every resource URI of one source has. */
export interface UriSpace {
  /**
   * Every URI of the source starts with one of these: `file:///{id}/` for a
   * files source; a static source's own URIs and the literal start of each
   * of its templates.
   */
  readonly prefixes: readonly string[];
  /** Whether a URI's path may contain an empty segment (`//`): S3 keys may, file paths and table names never do. */
  readonly emptySegments: boolean;
}

export interface SourceContext {
  /** The source's id, unique within its tenant. */
  readonly sourceId: string;
  readonly tenantId: string;
  /** Directory of the bootstrap file, for resolving relative paths. */
  readonly configDir: string;
  /** Already bound to tenant and source. */
  readonly logger: Logger;
  /**
   * Present when a tenant admin configured the source: every connection it
   * opens to a configured destination goes through this guard (connect-time
   * checks of the resolved address). Absent for what operators configured.
   */
  readonly egress?: EgressGuard | undefined;
}
