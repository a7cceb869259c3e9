import { z } from 'zod';
import { callerIdentitySchema } from './caller-identity-options.js';

const MIB = 1024 * 1024;

/**
 * Static credentials for the S3 API. In the bootstrap file they are written as
 * `{ "$env": "VAR" }`; the config loader resolves them to plain strings before
 * this schema runs. Never logged, never returned by any API.
 */
const credentialsSchema = z
  .object({
    accessKeyId: z.string().min(1),
    secretAccessKey: z.string().min(1),
    sessionToken: z.string().min(1).optional(),
  })
  .strict();

/**
 * Options of one `type: "s3"` source (the bootstrap entry minus `id` and
 * `type`). Every default is stated beside its key. Strict: unknown keys fail
 * at startup.
 */
export const s3SourceOptionsSchema = z
  .object({
    /** S3-compatible endpoint (MinIO, R2, Ceph, s3rver); absent means AWS S3 for `region`. */
    endpoint: z
      .url({ protocol: /^https?$/, error: 'endpoint must be an http(s) URL' })
      .refine((value) => {
        const url = new URL(value);
        return url.username === '' && url.password === '';
      }, 'endpoint must not embed credentials; use the credentials option')
      .optional(),
    /** Default `us-east-1`. */
    region: z.string().min(1).default('us-east-1'),
    /** S3 naming rules (3-63 characters), relaxed to allow legacy upper-case and underscore names. */
    bucket: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]$/, 'not a valid bucket name'),
    /**
     * Only keys under this prefix are published; URIs are relative to it.
     * Default `''` (the whole bucket). Must end with `/` so that it names a
     * folder, never a partial key name.
     */
    prefix: z
      .string()
      .default('')
      .refine((value) => value === '' || (value.endsWith('/') && !value.startsWith('/')), {
        message: 'prefix must be empty or end with "/" (and not start with "/")',
      }),
    /** Path-style addressing (`endpoint/bucket/key`); MinIO and s3rver need it. Default false, as in the SDK. */
    forcePathStyle: z.boolean().default(false),
    /** Absent: the SDK's default provider chain (environment, shared files, IMDS, ...). */
    credentials: credentialsSchema.optional(),
    /** Largest object `read()` returns; larger ones fail with MCPGW_RESOURCE_TOO_LARGE. Default 10 MiB. */
    maxObjectBytes: z
      .number()
      .int()
      .min(1)
      .max(1024 * MIB)
      .default(10 * MIB),
    /** Bounds of a folder read (objects directly under the folder). */
    folderRead: z
      .object({
        /** Default 100; at most 1,000 (one ListObjectsV2 page). */
        maxObjects: z.number().int().min(1).max(1000).default(100),
        /** Default 10 MiB. */
        maxTotalBytes: z
          .number()
          .int()
          .min(1)
          .max(1024 * MIB)
          .default(10 * MIB),
      })
      .strict()
      .default({ maxObjects: 100, maxTotalBytes: 10 * MIB }),
    /**
     * Ask S3 for an object's stored checksum with each GetObject
     * (`x-amz-checksum-mode: ENABLED`) and have the SDK check the body
     * against it; a mismatch fails the read. Default true (the SDK's own
     * default). It costs CPU on every read of an object stored with one (the
     * SDK computes a CRC64NVME in JavaScript, several ms per MiB; see
     * docs/performance.md, "Checksum validation"); false leaves the body's
     * integrity to TLS and the Content-Length check.
     */
    verifyChecksums: z.boolean().default(true),
    /** Per HTTP attempt (connect and response). Default 5,000 ms. */
    requestTimeoutMs: z.number().int().min(50).max(120_000).default(5_000),
    /** Attempts per S3 call, first included; a retry only if it fits the call's deadline (budgeted-retry.ts). Default 3. */
    maxAttempts: z.number().int().min(1).max(10).default(3),
    /**
     * In-flight S3 requests of this tenant, shared by all of its S3 sources.
     * Default 16.
     */
    maxInFlightPerTenant: z.number().int().min(1).max(1024).default(16),
    /** Listing fingerprint polling while someone watches. Default `{ mode: 'poll', intervalMs: 60000 }`. */
    changeDetection: z
      .object({
        mode: z.enum(['poll', 'off']).default('poll'),
        intervalMs: z.number().int().min(100).max(86_400_000).default(60_000),
      })
      .strict()
      .default({ mode: 'poll', intervalMs: 60_000 }),
    /**
     * Each caller's listing and reads with credentials of their own, from
     * AssumeRoleWithWebIdentity (README.md, "Caller identity"). Absent: every
     * caller reads with `credentials`.
     */
    callerIdentity: callerIdentitySchema.optional(),
  })
  .strict();

/** Validated options of an S3 source, defaults applied. */
export type S3SourceOptions = z.output<typeof s3SourceOptionsSchema>;
