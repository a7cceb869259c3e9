import type { S3Client } from '@aws-sdk/client-s3';
import { egressAgents, type EgressGuard } from '@mcpgw/core';
import { awsS3 } from './aws-s3-module.js';
import type { S3SourceOptions } from './s3-source-options.js';

/**
 * The SDK client an S3 source's options describe. No I/O happens here. With
 * `egress` (a source a tenant admin configured) its connections go through
 * the egress guard.
 */
export function createS3Client(options: S3SourceOptions, egress?: EgressGuard): S3Client {
  return new (awsS3().S3Client)({
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle,
    // Absent: the SDK's default provider chain. A copy, because the SDK
    // writes bookkeeping fields (`$source`) into the object it is given.
    ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } }),
    // The SDK's standard retry strategy: exponential backoff with jitter on
    // throttling, 5xx, connection errors and timeouts.
    maxAttempts: options.maxAttempts,
    requestHandler: {
      connectionTimeout: options.requestTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      // Without this the SDK only logs a breached requestTimeout.
      throwOnRequestTimeout: true,
      ...(egress === undefined ? {} : egressAgents(egress)),
    },
  });
}
