import type { SourceFactory } from '@mcpgw/core';
import { s3SourceOptionsSchema, type S3SourceOptions } from './s3-source-options.js';
import { createS3Source } from './s3-source.js';
import { uriPrefix } from './uri.js';

/** The `type: "s3"` source: the objects of one bucket (under a prefix) as resources. */
export const s3SourceFactory: SourceFactory<S3SourceOptions> = {
  type: 's3',
  optionsSchema: s3SourceOptionsSchema,
  create: (options, context) => createS3Source(options, context),
  model: {
    credentials: ['credentials.accessKeyId', 'credentials.secretAccessKey', 'credentials.sessionToken'],
    // The request's host is the endpoint (or AWS's for the region), with the bucket in
    // it unless path-style addressing is forced: each says where the signed requests go.
    targets: ['endpoint', 'region', 'bucket', 'forcePathStyle'],
    operatorOnly: false,
    // Without credentials the SDK's default chain uses the gateway's own (environment, files, IMDS).
    ambientCredentials: true,
  },
  // An S3 key may hold `//` (an empty segment), so a pattern may too.
  uriSpace: (_options, sourceId) => ({ prefixes: [uriPrefix(sourceId)], emptySegments: true }),
};
