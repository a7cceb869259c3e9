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
});

/** Validated options of a `postgres` source, defaults applied. */
export type PostgresSourceOptions = z.output<typeof postgresSourceOptionsSchema>;
/** A `postgres` source entry as written in the bootstrap file (after `$env` resolution). */
export type PostgresSourceConfig = z.input<typeof postgresSourceOptionsSchema>;
/** One column hidden from rows reads. */
export type ExcludedColumn = z.output<typeof excludedColumnSchema>;
