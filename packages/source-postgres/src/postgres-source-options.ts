import { z } from 'zod';

/**
 * Schemas that hold the system catalog rather than user data. They are never
 * published, even when listed: the catalog is how this source describes
 * tables, not something a caller should browse through it.
 */
const SYSTEM_SCHEMA = /^(pg_catalog|information_schema|pg_toast|pg_temp_\d+|pg_toast_temp_\d+)$/;

/** Postgres truncates identifiers to 63 bytes (NAMEDATALEN - 1). */
const MAX_IDENTIFIER_BYTES = 63;

const identifier = z
  .string()
  .min(1)
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_IDENTIFIER_BYTES && !v.includes('\0'), {
    message: 'must be a Postgres identifier (1 to 63 bytes, no NUL)',
  });

/** A connection string; checked without ever echoing it (it may hold a password). */
const connectionUrl = z.string().refine(
  (value) => {
    if (!URL.canParse(value)) return false;
    const protocol = new URL(value).protocol;
    return protocol === 'postgres:' || protocol === 'postgresql:';
  },
  { message: 'must be a postgres:// or postgresql:// URL' },
);

const connectionSchema = z.union([
  z.strictObject({
    /** `postgres://user:password@host:port/database?sslmode=require`. */
    url: connectionUrl,
    /**
     * The password, kept out of the URL (the admin API seals it under
     * `secrets`); it replaces one the URL carries.
     */
    password: z.string().optional(),
  }),
  z.strictObject({
    host: z.string().min(1),
    /** Default 5432. */
    port: z.number().int().min(1).max(65_535).default(5432),
    database: z.string().min(1),
    user: z.string().min(1),
    /** Written `{ "$env": "VAR" }` in the bootstrap file; the config loader resolves it. */
    password: z.string().optional(),
  }),
]);

const excludedColumnSchema = z.strictObject({
  /** Any schema when absent. */
  schema: identifier.optional(),
  /** Any table when absent. */
  table: identifier.optional(),
  column: identifier,
});

/**
 * A database role a caller may be switched to. Not `none` in any case (for
 * `set_config('role', ...)` that means "back to the login role", the
 * service credential) and not `public` (a pseudo-role no one can become).
 */
const switchableRole = identifier.refine((v) => !/^(none|public)$/i.test(v), {
  message: 'must name a real role ("none" and "public" are not roles a caller can act as)',
});

/** Claim values a mapping entry matches; one in common with the caller's suffices. */
const claimValues = z.array(z.string().min(1)).min(1);

/** The `mcpgw.*` settings that carry a caller's claims; see README.md, "Caller identity". */
export const CALLER_SETTINGS = ['subject', 'groups', 'scopes', 'tenant', 'client_id'] as const;
export type CallerSetting = (typeof CALLER_SETTINGS)[number];

const callerIdentitySchema = z
  .strictObject({
    /**
     * The roles callers may be switched to: the OPERATOR's allowlist (an
     * operator-only path, see the factory's model). The login role must be
     * a member of each (`GRANT role TO login`, the login role NOINHERIT).
     */
    roles: z
      .array(switchableRole)
      .min(1)
      .refine((list) => new Set(list).size === list.length, { message: 'roles must not repeat' }),
    /**
     * The first entry whose `match` the caller satisfies chooses their role.
     * Each present matcher needs one value in common with the caller's
     * claims; absent matchers impose nothing (an empty match matches all).
     */
    mapping: z
      .array(
        z.strictObject({
          match: z.strictObject({
            groups: claimValues.optional(),
            scopes: claimValues.optional(),
            subjects: claimValues.optional(),
            clientIds: claimValues.optional(),
          }),
          role: switchableRole,
        }),
      )
      .default([]),
    /**
     * A caller no entry matches: `refuse` (the default) shows them nothing of
     * this source (an empty listing, reads not found), or `{ role }` acts as
     * that (minimal) role.
     */
    default: z.union([z.literal('refuse'), z.strictObject({ role: switchableRole })]).default('refuse'),
    /**
     * Which `mcpgw.*` transaction settings carry the caller's claims for
     * row-level security: `true` (the default) all of them, `false` none,
     * or a list of `subject`, `groups`, `scopes`, `tenant`, `client_id`.
     */
    settings: z
      .union([
        z.boolean(),
        z
          .array(z.enum(CALLER_SETTINGS))
          .refine((list) => new Set(list).size === list.length, { message: 'settings must not repeat' }),
      ])
      .default(true),
  })
  .superRefine((value, context) => {
    // A role outside the allowlist is refused where it is written, naming the field.
    const allowed = new Set(value.roles);
    const outside = (role: string, path: (string | number)[]) => {
      if (!allowed.has(role)) {
        context.addIssue({
          code: 'custom',
          path,
          message: `role "${role}" is not in callerIdentity.roles, the roles an operator allows this source to act as`,
        });
      }
    };
    value.mapping.forEach((entry, i) => outside(entry.role, ['mapping', i, 'role']));
    if (value.default !== 'refuse') outside(value.default.role, ['default', 'role']);
  });

/** Options of a `postgres` source (the bootstrap entry minus `id` and `type`). */
export const postgresSourceOptionsSchema = z.strictObject({
  connection: connectionSchema,
  /** The schemas to publish, exactly as the catalog spells them (case matters). */
  schemas: z
    .array(
      identifier.refine((v) => !SYSTEM_SCHEMA.test(v), {
        message: 'system schemas (pg_catalog, information_schema, pg_toast...) cannot be published',
      }),
    )
    .min(1)
    .refine((list) => new Set(list).size === list.length, { message: 'schemas must not repeat' }),
  pool: z
    .strictObject({
      /** Most connections this source opens (the change feed uses one more). */
      max: z.number().int().min(1).max(100).default(4),
      /**
       * How long to wait for a connection (new or from the pool). `pg` waits
       * forever by default (`connectionTimeoutMillis: 0`), which would hang requests when the
       * server is unreachable.
       */
      connectionTimeoutMs: z.number().int().min(100).max(60_000).default(1500),
    })
    .prefault({}),
  /** `SET LOCAL statement_timeout` of every transaction. */
  statementTimeoutMs: z.number().int().min(100).max(600_000).default(5000),
  /** `SET LOCAL lock_timeout` of every transaction: catalog reads never queue behind DDL for long. */
  lockTimeoutMs: z.number().int().min(10).max(600_000).default(1000),
  rows: z
    .strictObject({
      /** Publishes the rows template; off by default (metadata only). */
      enabled: z.boolean().default(false),
      /** The largest `limit` a rows read accepts, and the default when none is given. */
      maxLimit: z.number().int().min(1).max(1000).default(100),
      /** Columns never returned by rows reads (e.g. password hashes). */
      columns: z.strictObject({ exclude: z.array(excludedColumnSchema).default([]) }).prefault({}),
    })
    .prefault({}),
  changeDetection: z
    .strictObject({
      /**
       * `event-trigger`: install an event trigger that NOTIFYs on DDL (needs
       * superuser; falls back to `poll` if it cannot be installed).
       * `poll`: compare a catalog fingerprint every `pollIntervalMs`.
       * `off`: no change feed.
       */
      mode: z.enum(['event-trigger', 'poll', 'off']).default('poll'),
      pollIntervalMs: z.number().int().min(50).max(3_600_000).default(30_000),
    })
    .prefault({}),
  /**
   * Runs each caller's listing and reads under a database role chosen from
   * their verified claims, with their claims in `mcpgw.*` settings for
   * row-level security. Absent: every caller reads as the login role.
   */
  callerIdentity: callerIdentitySchema.optional(),
});

/** How callers act at the database (`callerIdentity`), defaults applied. */
export type CallerIdentityOptions = z.output<typeof callerIdentitySchema>;

/** Validated options of a `postgres` source, defaults applied. */
export type PostgresSourceOptions = z.output<typeof postgresSourceOptionsSchema>;
/** A `postgres` source entry as written in the bootstrap file (after `$env` resolution). */
export type PostgresSourceConfig = z.input<typeof postgresSourceOptionsSchema>;
/** One column hidden from rows reads. */
export type ExcludedColumn = z.output<typeof excludedColumnSchema>;
