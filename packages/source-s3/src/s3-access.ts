import type { ListObjectsV2CommandOutput, S3Client, _Object, CommonPrefix } from '@aws-sdk/client-s3';
import {
  bytesToContents,
  errorSummary,
  findEgressRefusal,
  isTextLike,
  streamedBlobContents,
  formatBytes,
  GatewayError,
  isGatewayError,
  type Logger,
  type ResourceContents,
  type SourceContext,
} from '@mcpgw/core';
import type { ListedObject } from './listing-walk.js';
import { effectiveMimeType } from './mime.js';
import type { S3SourceOptions } from './s3-source-options.js';
import { objectStream, type ObjectBody } from './object-stream.js';
import { readBounded } from './read-bounded.js';
import { awsS3 } from './aws-s3-module.js';
import { registerBudget, type OperationBudget } from './budgeted-retry.js';
import { isAccessDenied, isNotFound } from './s3-errors.js';
import { acquireTenantSlot, type ReleaseSlot } from './tenant-slots.js';
import { keyToUri } from './uri.js';

/** S3 returns at most 1,000 keys per ListObjectsV2 call. */
export const MAX_LIST_KEYS = 1000;

/**
 * Binary objects of at least this size are streamed into the response as
 * they arrive rather than read whole first (and are never kept by the result
 * cache, whose default value limit of 1 MiB of JSON holds about 768 KiB of bytes).
 */
export const STREAM_FROM_BYTES = 512 * 1024;

/** The parameters of one ListObjectsV2 call, less the bucket. */
export interface ListParams {
  Prefix: string;
  StartAfter?: string;
  MaxKeys: number;
  Delimiter?: string;
  ContinuationToken?: string;
}

/**
 * One S3 source's calls to its bucket, each under the operation deadline and
 * a tenant slot, shared by the listing, folder reads and change detection.
 */
export interface S3Access {
  readonly sourceId: string;
  readonly options: S3SourceOptions;
  readonly logger: Logger;
  /**
   * Runs one S3 operation under the operation deadline (and, unless `slot`
   * is false, a tenant slot). Backend failures become MCPGW_SOURCE_UNAVAILABLE
   * naming only the source id; the cause goes to the log.
   */
  call<T>(
    operation: string,
    signal: AbortSignal | undefined,
    slot: boolean,
    run: (deadline: AbortSignal, keepSlot: KeepSlot) => Promise<T>,
  ): Promise<T>;
  /** One ListObjectsV2 call through `call`. */
  list(operation: string, signal: AbortSignal | undefined, params: ListParams): Promise<ListObjectsV2CommandOutput>;
  /**
   * The object's contents, or undefined when it does not exist. Call inside
   * `call`. A binary object of STREAM_FROM_BYTES or more comes back as a
   * streamed blob that keeps the slot until its body is done.
   */
  getObject(
    key: string,
    maxBytes: number,
    deadline: AbortSignal,
    keepSlot?: KeepSlot,
  ): Promise<ResourceContents | undefined>;
  /** A listing's common prefixes, relative to the source prefix. */
  relativePrefixes(prefixes: CommonPrefix[] | undefined): string[];
  /** A listing's objects under the source prefix, with keys relative to it. */
  relativeObjects(contents: _Object[] | undefined): ListedObject[];
}

/**
 * Takes over the release of the operation's tenant slot from `call`, for
 * work that outlives it (a body streamed after GetObject returned).
 */
export type KeepSlot = () => () => void;

/**
 * The bucket access of one S3 source over `client`. With `denied: 'absent'`
 * (a caller's own role session) S3's AccessDenied is what that caller's
 * role may not see: a read of it is not found, a listing of it is empty,
 * as for anything else outside the caller's view (the log says so).
 */
export function createS3Access(
  client: S3Client,
  options: S3SourceOptions,
  context: SourceContext,
  denied: 'fail' | 'absent' = 'fail',
): S3Access {
  const sourceId = context.sourceId;
  const logger = context.logger;
  /** Deadline of one operation: every attempt, the wait for a tenant slot and the body. */
  const operationBudgetMs = options.requestTimeoutMs * options.maxAttempts;

  async function call<T>(
    operation: string,
    signal: AbortSignal | undefined,
    slot: boolean,
    run: (deadline: AbortSignal, keepSlot: KeepSlot) => Promise<T>,
  ): Promise<T> {
    const timeout = AbortSignal.timeout(operationBudgetMs);
    const deadline = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    // The same deadline for the retry strategy, which retries only what fits before it.
    const budget: OperationBudget = { deadlineAt: performance.now() + operationBudgetMs };
    registerBudget(deadline, budget);
    let release: ReleaseSlot | undefined;
    const keepSlot: KeepSlot = () => {
      const kept = release ?? (() => {});
      release = undefined;
      return kept;
    };
    try {
      if (slot) release = await acquireTenantSlot(context.tenantId, options.maxInFlightPerTenant, deadline);
      return await run(deadline, keepSlot);
    } catch (error) {
      if (isGatewayError(error)) throw error;
      // The caller gave up (client cancelled): not a backend failure.
      if (signal?.aborted === true) throw signal.reason;
      logger.warn({ operation, err: errorSummary(error) }, 'S3 request failed');
      // The refused address is for the people who configure the gateway (status, logs), not callers.
      const message = timeout.aborted
        ? `S3 source "${sourceId}" did not answer within ${operationBudgetMs} ms`
        : budget.refusedRetry === 'THROTTLING'
          ? `S3 source "${sourceId}" is throttling requests: no time left to retry within ${operationBudgetMs} ms`
          : findEgressRefusal(error) === undefined
            ? `S3 source "${sourceId}" is unavailable`
            : `S3 source "${sourceId}" is unavailable: the gateway's egress policy refuses its endpoint`;
      throw new GatewayError('MCPGW_SOURCE_UNAVAILABLE', message, { cause: error });
    } finally {
      release?.();
    }
  }

  /** Whether `error` is the caller's role being refused what it asked for, when that counts as absent. */
  function absentByDenial(operation: string, error: unknown): boolean {
    if (denied !== 'absent' || !isAccessDenied(error)) return false;
    logger.info({ operation }, "S3 refused the caller's role: treated as outside what it may see");
    return true;
  }

  function list(
    operation: string,
    signal: AbortSignal | undefined,
    params: ListParams,
  ): Promise<ListObjectsV2CommandOutput> {
    return call(operation, signal, true, async (deadline) => {
      try {
        return await client.send(new (awsS3().ListObjectsV2Command)({ Bucket: options.bucket, ...params }), {
          abortSignal: deadline,
        });
      } catch (error) {
        if (absentByDenial(operation, error)) return { $metadata: {}, Contents: [], IsTruncated: false };
        throw error;
      }
    });
  }

  function tooLarge(): GatewayError {
    return new GatewayError(
      'MCPGW_RESOURCE_TOO_LARGE',
      `The object exceeds the ${formatBytes(options.maxObjectBytes)} limit of S3 source "${sourceId}"`,
    );
  }

  async function getObject(
    key: string,
    maxBytes: number,
    deadline: AbortSignal,
    keepSlot?: KeepSlot,
  ): Promise<ResourceContents | undefined> {
    let output;
    try {
      output = await client.send(
        new (awsS3().GetObjectCommand)({ Bucket: options.bucket, Key: options.prefix + key }),
        {
          abortSignal: deadline,
        },
      );
    } catch (error) {
      if (isNotFound(error) || absentByDenial('GetObject', error)) return undefined;
      throw error;
    }
    const body = output.Body as ObjectBody | undefined;
    const uri = keyToUri(sourceId, key);
    const mimeType = effectiveMimeType(output.ContentType, key);
    const length = output.ContentLength;
    // Text must be read whole (it is sent as text only when it decodes as UTF-8); so must a body of unknown length.
    if (
      body !== undefined &&
      keepSlot !== undefined &&
      length !== undefined &&
      length >= STREAM_FROM_BYTES &&
      length <= maxBytes &&
      !isTextLike(mimeType)
    ) {
      const release = keepSlot();
      return streamedBlobContents(
        uri,
        mimeType,
        objectStream({ body, byteLength: length, deadline, release, sourceId, logger }),
      );
    }
    const bytes =
      body === undefined
        ? Buffer.alloc(0)
        : await readBounded(body, maxBytes, output.ContentLength, tooLarge, deadline);
    return bytesToContents(uri, mimeType, bytes);
  }

  function relativePrefixes(prefixes: CommonPrefix[] | undefined): string[] {
    const prefix = options.prefix;
    return (prefixes ?? []).flatMap((entry) =>
      entry.Prefix?.startsWith(prefix) === true ? [entry.Prefix.slice(prefix.length)] : [],
    );
  }

  function relativeObjects(contents: _Object[] | undefined): ListedObject[] {
    const prefix = options.prefix;
    const objects: ListedObject[] = [];
    for (const object of contents ?? []) {
      if (object.Key === undefined || !object.Key.startsWith(prefix)) continue;
      objects.push({ key: object.Key.slice(prefix.length), size: object.Size, lastModified: object.LastModified });
    }
    return objects;
  }

  return { sourceId, options, logger, call, list, getObject, relativePrefixes, relativeObjects };
}
