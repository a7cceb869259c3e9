import type { S3Client } from '@aws-sdk/client-s3';
import { egressAgents, type EgressGuard } from '@mcpgw/core';
import { awsS3 } from './aws-s3-module.js';
import { carryBudget, createBudgetedRetryStrategy } from './budgeted-retry.js';
import type { S3SourceOptions } from './s3-source-options.js';
import type { SessionCredentials } from './sts-client.js';

/**
 * The SDK client an S3 source's options describe. No I/O happens here. With
 * `egress` (a source a tenant admin configured) its connections go through
 * the egress guard. `jitter` fixes the retries' jitter (tests); default random.
 */
export function createS3Client(options: S3SourceOptions, egress?: EgressGuard, jitter?: () => number): S3Client {
  const client = new (awsS3().S3Client)({
    ...clientOptions(options, jitter),
    // Absent: the SDK's default provider chain. A copy, because the SDK
    // writes bookkeeping fields (`$source`) into the object it is given.
    ...(options.credentials === undefined ? {} : { credentials: { ...options.credentials } }),
    requestHandler: {
      connectionTimeout: options.requestTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      // Without this the SDK only logs a breached requestTimeout.
      throwOnRequestTimeout: true,
      ...(egress === undefined ? {} : egressAgents(egress)),
    },
  });
  carryBudget(client);
  return client;
}

/**
 * A client that signs with one role session's credentials (SigV4 with its
 * session token) and sends through `base`'s request handler: the same
 * timeouts, egress guard and connection pool, whoever the caller. Never
 * `destroy()` it: that would close the pool `base` owns.
 */
export function createSessionS3Client(
  options: S3SourceOptions,
  base: S3Client,
  credentials: SessionCredentials,
): S3Client {
  const client = new (awsS3().S3Client)({
    ...clientOptions(options),
    credentials: { ...credentials },
    requestHandler: base.config.requestHandler,
  });
  carryBudget(client);
  return client;
}

function clientOptions(options: S3SourceOptions, jitter?: () => number) {
  const { maxAttempts, requestTimeoutMs } = options;
  return {
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle,
    // WHEN_REQUIRED: GetObject asks for no checksum, so there is none to check.
    responseChecksumValidation: options.verifyChecksums ? ('WHEN_SUPPORTED' as const) : ('WHEN_REQUIRED' as const),
    // The SDK's standard retries (exponential backoff with jitter on throttling, 5xx, connection
    // errors and timeouts), each only if it fits in what is left of the operation's budget.
    maxAttempts,
    retryStrategy: createBudgetedRetryStrategy({
      maxAttempts,
      requestTimeoutMs,
      ...(jitter === undefined ? {} : { random: jitter }),
    }),
  };
}
