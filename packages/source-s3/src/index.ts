export { s3SourceFactory, createS3Source } from './factory.js';
export { s3SourceOptionsSchema } from './options.js';
export type { S3SourceOptions } from './options.js';
export { S3Source } from './s3-source.js';
export { keyToUri, uriPrefix, uriToKey } from './uri.js';
