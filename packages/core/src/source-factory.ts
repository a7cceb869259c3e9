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
  /**
   * Who may configure a source of this type and which of its options are
   * credentials or say where those credentials are sent. The admin API's
   * write rules are derived from it: credentials only under `secrets`, sealed
   * credentials bound to their targets, operator-only types.
   */
  readonly model: SourceModel;
}

/**
 * The typed model of a source type's options, by dotted option path
 * (`connection.password`, as in the admin API's `secrets`). Paths name
 * leaves of the options object: a credential path holds one string.
 */
export interface SourceModel {
  /**
   * The option paths that hold credentials. Only these may be written under
   * the admin API's write-only `secrets` (sealed, merged into the options when
   * the source opens); written in the options themselves they are refused,
   * since the document is returned and audited.
   */
  readonly credentials: readonly string[];
  /**
   * The option paths that say where the credentials are sent (host, port,
   * database, connection URL, endpoint, bucket, region...). Stored
   * credentials are bound to them: changing one (or the type) without
   * writing the credentials again is refused, so that they never go to a
   * place their owner did not send them to.
   */
  readonly targets: readonly string[];
  /**
   * Options holding a URL that the driver reads credentials (or host
   * files) from. API writes refuse a password in it; its credential goes
   * under `secrets` as `password`.
   */
  readonly urls?: readonly SourceUrlOption[];
  /**
   * Options holding a host name that, when it starts with `/`, is the folder
   * of a Unix socket on the gateway's own host (libpq's rule): operators only.
   */
  readonly socketHosts?: readonly string[];
  /**
   * Option paths (dotted, e.g. `callerIdentity.roles`) only platform
   * operators may set or change: a tenant admin's write must leave their
   * value as stored. For what bounds the source's power over its backend
   * beyond the tenant's own choice (the database roles a source may act as).
   */
  readonly operatorPaths?: readonly string[];
  /**
   * Only platform operators may configure this type: it reaches the
   * gateway's own host (a `files` source reads the gateway's file system).
   */
  readonly operatorOnly: boolean;
  /**
   * Without any of its credentials the driver falls back to the gateway's
   * own (environment variables, credential files, instance metadata), which
   * only platform operators may lend to a source.
   */
  readonly ambientCredentials?: boolean;
}

/** A URL-valued option of a source type, as {@link SourceModel.urls} lists them. */
export interface SourceUrlOption {
  /** Its option path, e.g. `connection.url`. */
  readonly path: string;
  /** The credential path its password belongs under instead, e.g. `connection.password`. */
  readonly password: string;
  /** Query parameters that carry a password too (libpq's `password`). */
  readonly passwordParameters?: readonly string[];
  /**
   * Query parameters naming files on the gateway's host that the driver
   * reads (libpq's `sslcert`, `sslkey`, `sslrootcert`): operators only.
   */
  readonly hostFileParameters?: readonly string[];
  /**
   * Whether a host starting with `/` (the URL's own, percent-decoded, or a
   * `host` query parameter) is the folder of a Unix socket on the gateway's
   * host, as for libpq: operators only.
   */
  readonly socketHosts?: boolean;
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
