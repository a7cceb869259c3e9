import type { SourceFactory } from '@mcpgw/core';
import { s3SourceOptionsSchema, type S3SourceOptions } from './s3-source-options.js';
import { createS3Source } from './s3-source.js';
import { uriPrefix } from './uri.js';

/** The `type: "s3"` source (issue 6). */
export const s3SourceFactory: SourceFactory<S3SourceOptions> = {
  type: 's3',
  optionsSchema: s3SourceOptionsSchema,
  create: (options, context) => createS3Source(options, context),
  // An S3 key may hold `//` (an empty segment), so a pattern may too.
  uriSpace: (_options, sourceId) => ({ prefixes: [uriPrefix(sourceId)], emptySegments: true }),
};
