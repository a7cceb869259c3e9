// The public surface of @mcpgw/source-s3: what apps/gateway, bench and other
// packages' tests use. Tests reach the other modules by path (../src/<module>.js).

/** The `s3` source type, and a source created from parsed options (bench). */
export { s3SourceFactory, createS3Source } from './factory.js';
/** Validates an `s3` source entry's options. */
export { s3SourceOptionsSchema } from './options.js';
/** The S3 source over a given client (the integration tests pass one aimed at s3rver). */
export { S3Source } from './s3-source.js';
