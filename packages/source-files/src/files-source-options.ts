import { z } from 'zod';

const MiB = 1024 * 1024;

/** Options of a `files` source (the bootstrap entry minus `id` and `type`). */
export const filesSourceOptionsSchema = z.strictObject({
  /** The folder to publish; a relative path is resolved against the bootstrap file's folder. */
  root: z.string().min(1),
  /** A larger file's read fails with MCPGW_RESOURCE_TOO_LARGE. Default 10 MiB. */
  maxFileBytes: z
    .number()
    .int()
    .positive()
    .max(1024 * MiB)
    .default(10 * MiB),
  /** Bounds of one folder read, which returns the folder's files as several contents. */
  directoryRead: z
    .strictObject({
      /** At most this many files per folder read. Default 50. */
      maxFiles: z.number().int().positive().default(50),
      /** At most this many bytes of file content per folder read. Default 5 MiB. */
      maxTotalBytes: z
        .number()
        .int()
        .positive()
        .max(1024 * MiB)
        .default(5 * MiB),
    })
    .prefault({}),
  /**
   * Most entries read from one folder (a listing sorts each folder's names, so
   * they are all held at once). A larger folder is listed up to this many,
   * the first the OS returns, and the listing says it is incomplete. The
   * tree as a whole has no bound: listings page through it. Default 100,000.
   */
  maxEntries: z.number().int().positive().max(10_000_000).default(100_000),
});

/** Validated options of a `files` source, defaults applied. */
export type FilesSourceOptions = z.output<typeof filesSourceOptionsSchema>;
/** A `files` source entry as written in the bootstrap file. */
export type FilesSourceConfig = z.input<typeof filesSourceOptionsSchema>;
