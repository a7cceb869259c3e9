import type { SourceFactory } from '@mcpgw/core';
import { s3SourceOptionsSchema, type S3SourceOptions } from './s3-source-options.js';
import { createS3Source, type S3SourcePorts } from './s3-source.js';
import { uriPrefix } from './uri.js';

/**
 * The `type: "s3"` source over the gateway's ports: `mintIdentityToken`
 * signs the identity tokens `callerIdentity` presents to STS (without it a
 * source with `callerIdentity` fails to start, naming why).
 */
export function createS3SourceFactory(ports: S3SourcePorts = {}): SourceFactory<S3SourceOptions> {
  return {
    type: 's3',
    optionsSchema: s3SourceOptionsSchema,
    create: (options, context) => createS3Source(options, context, undefined, ports),
    model: {
      credentials: ['credentials.accessKeyId', 'credentials.secretAccessKey', 'credentials.sessionToken'],
      // The request's host is the endpoint (or AWS's for the region), with the bucket in
      // it unless path-style addressing is forced: each says where the signed requests go.
      targets: ['endpoint', 'region', 'bucket', 'forcePathStyle'],
      // The roles callers may be given bound what a tenant admin's mapping can reach, and the
      // STS endpoint is where the tenant's identity tokens go: both the operator's.
      operatorPaths: ['callerIdentity.roleArns', 'callerIdentity.stsEndpoint'],
      operatorOnly: false,
      // Without credentials the SDK's default chain uses the gateway's own (environment, files, IMDS).
      ambientCredentials: true,
    },
    // An S3 key may hold `//` (an empty segment), so a pattern may too.
    uriSpace: (_options, sourceId) => ({ prefixes: [uriPrefix(sourceId)], emptySegments: true }),
  };
}

/** The `type: "s3"` source: the objects of one bucket (under a prefix) as resources. No identity tokens: see createS3SourceFactory. */
export const s3SourceFactory: SourceFactory<S3SourceOptions> = createS3SourceFactory();
