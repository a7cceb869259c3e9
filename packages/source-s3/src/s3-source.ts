import type { S3Client } from '@aws-sdk/client-s3';
import {
  DEFAULT_SOURCE_TTL_MS,
  errorSummary,
  findEgressRefusal,
  isGatewayError,
  mediaTypeOf,
  rangeAdmits,
  type ListingRange,
  type Page,
  type PageRequest,
  type Principal,
  type ResourceContents,
  type ResourceDescriptor,
  type ResourceTemplateDescriptor,
  type Source,
  type SourceContext,
  type SourceHealth,
  type VisibleUri,
  sourceFailureReason,
} from '@mcpgw/core';
import { ChangePoller } from './change-poller.js';
import { compareKeys } from './key-order.js';
import { keyShapes, maxKey, outerFolder } from './key-ranges.js';
import { walkListing, type ListingEntry } from './listing-walk.js';
import { decodePosition, encodePosition } from './position.js';
import { awsS3 } from './aws-s3-module.js';
import { createCallerAccess } from './caller-access.js';
import type { MintIdentityToken } from './identity-token.js';
import { createS3Access, MAX_LIST_KEYS, type S3Access } from './s3-access.js';
import { createS3Client } from './s3-client.js';
import { fingerprintScanner } from './s3-fingerprint.js';
import { readFolder } from './s3-folder-read.js';
import type { S3SourceOptions } from './s3-source-options.js';
import { isFolderKey, keyToUri, uriPrefix, uriToKey } from './uri.js';

/** S3 keys are at most 1,024 bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;

/**
 * How one range is asked for: in a complete subtree (or a full scan) every
 * key gives an entry, so `room` keys fill the page; other ranges may pass
 * keys over, so they ask for as many as one call returns; one key is one key
 * (the shortest key of a range is its prefix, so it comes first).
 */
function listCall(range: ListingRange, room: number, filtered: boolean): { MaxKeys: number; Delimiter?: string } {
  if (range.exact === true) return { MaxKeys: 1 };
  if (range.depth === undefined) return { MaxKeys: range.complete === true || !filtered ? room : MAX_LIST_KEYS };
  return range.depth === 0 ? { MaxKeys: MAX_LIST_KEYS, Delimiter: '/' } : { MaxKeys: MAX_LIST_KEYS };
}

/**
 * Who asks, as the catalog passes it to a source that answers each caller
 * under a backend identity of their own: the verified principal, never the
 * token. Read from `PageRequest.caller` and `read`'s fourth argument.
 */
export interface S3Caller {
  readonly principal: Principal;
}

/** An S3 source, with the backend identity each caller reads under. */
export interface S3Source extends Source {
  /** With `callerIdentity`, `page.caller` chooses whose role session lists. */
  listResources(page: PageRequest & { caller?: S3Caller }, signal?: AbortSignal): Promise<Page<ResourceDescriptor>>;
  /** With `callerIdentity`, `caller` chooses whose role session reads. */
  read(
    uri: string,
    signal?: AbortSignal,
    visible?: VisibleUri,
    caller?: S3Caller,
  ): Promise<ResourceContents[] | undefined>;
  /**
   * The backend identity `principal` reads under (`callerIdentity`: the
   * role and session tags; absent principal: no caller). Every cache of
   * this source's listing pages and reads must key on it: callers share an
   * entry exactly when their keys are equal. Without `callerIdentity`,
   * one key for all (the source's own credentials). Pure, no I/O.
   */
  backendIdentityKey(principal: Principal | undefined): string;
  /** The same identity as an admin may be shown it (role and tags; never credentials). */
  backendIdentityShown(principal: Principal | undefined): Readonly<Record<string, unknown>>;
}

/** What an S3 source needs beyond its options: the gateway's ports. */
export interface S3SourcePorts {
  /** The tenant's identity tokens, for `callerIdentity` (absent: such a source fails to start). */
  readonly mintIdentityToken?: MintIdentityToken | undefined;
  /** Milliseconds since the epoch, for credential expiry. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

/**
 * S3 objects and folders under one bucket prefix as MCP resources. See the package README for URIs, listing order and limits.
 *
 * No I/O happens here: a bucket that is down at startup must not stop the
 * gateway (other tenants keep working); `health()` reports it. `client`
 * defaults to the one the options describe (the integration tests pass one
 * aimed at s3rver). `watch` and `settled` are present only when
 * `changeDetection.mode` is `poll`. With `callerIdentity` each caller's
 * listing and reads use their own role session (`caller-access.ts`);
 * health and change detection, which serve no caller, use `client`.
 */
export function createS3Source(
  options: S3SourceOptions,
  context: SourceContext,
  client: S3Client = createS3Client(options, context.egress),
  ports: S3SourcePorts = {},
): S3Source {
  const sourceId = context.sourceId;
  const access = createS3Access(client, options, context);
  const callerIdentity = options.callerIdentity;
  if (callerIdentity !== undefined && ports.mintIdentityToken === undefined) {
    throw new Error(
      `S3 source "${sourceId}" has callerIdentity, but this gateway mints no identity tokens for its tenants`,
    );
  }
  const callers =
    callerIdentity === undefined || ports.mintIdentityToken === undefined
      ? undefined
      : createCallerAccess({
          options,
          callerIdentity,
          context,
          base: client,
          mintIdentityToken: ports.mintIdentityToken,
          now: ports.now ?? Date.now,
        });

  /** The access `caller` reads with; undefined when they see nothing of the source. */
  async function accessOf(
    caller: S3Caller | undefined,
    signal: AbortSignal | undefined,
  ): Promise<S3Access | undefined> {
    if (callers === undefined) return access;
    const result = await callers.accessFor(caller?.principal, signal);
    return result.kind === 'access' ? result.access : undefined;
  }
  const poller =
    options.changeDetection.mode === 'poll'
      ? new ChangePoller({
          sourceId,
          intervalMs: options.changeDetection.intervalMs,
          scan: fingerprintScanner(access),
          toUri: (key) => keyToUri(sourceId, key),
          logger: context.logger,
        })
      : undefined;
  let closed = false;

  /**
   * One page of the listing, in key order. With `page.prefixes`
   * only the key ranges the caller's grants can reach are listed: one
   * ListObjectsV2 per range at most, ranges in key order. Normalized ranges
   * are disjoint and each is contiguous in key order, so walking them one
   * after the other yields exactly the full walk's entries that lie in them,
   * in the same order, and the position stays what it always was (the last
   * key handled): a page can end inside a range or between two. A range's
   * shape (`page.ranges`) chooses the call: a subtree lists its keys flat, a
   * single level lists with the `/` delimiter (deeper keys come back rolled
   * up as one common prefix each), other depths list 1,000 keys flat and keep
   * the admitted ones, and one key asks for one key. Entries the caller may
   * not see (`page.visible`) are passed over like those the shape refuses, so
   * a page is filled from one call per range as far as that call reaches.
   */
  async function listResources(
    page: PageRequest & { caller?: S3Caller },
    signal?: AbortSignal,
  ): Promise<Page<ResourceDescriptor>> {
    const access = await accessOf(page.caller, signal);
    if (access === undefined) return { items: [] };
    const after = page.position === undefined ? '' : decodePosition(page.position);
    const limit = Math.max(1, Math.min(page.limit, MAX_LIST_KEYS));
    const ranges: ListingRange[] =
      page.prefixes === undefined
        ? [{ prefix: '' }]
        : keyShapes(sourceId, page.ranges ?? page.prefixes.map((prefix) => ({ prefix })));
    const items: ResourceDescriptor[] = [];
    let last = after;
    for (const range of ranges) {
      // Everything in a range sorting before `last` that `last` is not inside
      // was handled by an earlier page; a one-key range, its key once passed.
      if (compareKeys(range.prefix, last) < 0 && !last.startsWith(range.prefix)) continue;
      if (range.exact === true && (range.prefix === '' || compareKeys(range.prefix, last) <= 0)) continue;
      if (items.length >= limit) return { items, nextPosition: encodePosition(last) };
      // The range's own ancestor folders lie outside it (and outside what the
      // caller may see): start after the longest of them.
      const start = maxKey(last, outerFolder(range.prefix));
      const room = limit - items.length;
      const visible = page.visible;
      const admit = (key: string) =>
        rangeAdmits(range, key) && (visible === undefined || visible(keyToUri(sourceId, key)));
      const call = listCall(range, room, page.visible !== undefined);
      const output = await access.list('ListObjectsV2', signal, {
        Prefix: options.prefix + range.prefix,
        StartAfter: start === '' ? undefined : options.prefix + start,
        ...call,
      });
      const listed = access.relativeObjects(output.Contents);
      if (call.Delimiter !== undefined) {
        // Each rolled-up folder stands where its first key would: a folder marker.
        listed.push(...access.relativePrefixes(output.CommonPrefixes).map((key) => ({ key })));
        listed.sort((a, b) => compareKeys(a.key, b.key));
      }
      const more = output.IsTruncated === true && range.exact !== true;
      const step = walkListing(listed, start, room, more, admit);
      items.push(...step.entries.map(describe));
      if (step.next !== undefined) return { items, nextPosition: encodePosition(step.next) };
      last = maxKey(last, range.exact === true ? range.prefix : (step.entries.at(-1)?.key ?? ''));
    }
    return { items };
  }

  async function listTemplates(): Promise<ResourceTemplateDescriptor[]> {
    return [
      {
        // RFC 6570 reserved expansion keeps "/" and percent-encoded triplets,
        // so a key whose characters are RFC 3986 pchars (or already encoded)
        // expands to the canonical URI; anything else resolves to not found.
        uriTemplate: `${uriPrefix(sourceId)}{+key}`,
        name: `${sourceId}-object`,
        title: `Object in ${sourceId}`,
        description:
          'Any object of this S3 source, or a folder when the key ends with "/". ' +
          'key is relative to the source prefix, "/"-separated, with characters outside ' +
          'RFC 3986 pchar percent-encoded as UTF-8 (e.g. a space as %20).',
      },
    ];
  }

  async function read(
    uri: string,
    signal?: AbortSignal,
    visible?: VisibleUri,
    caller?: S3Caller,
  ): Promise<ResourceContents[] | undefined> {
    const key = uriToKey(sourceId, uri);
    if (key === undefined) return undefined;
    if (Buffer.byteLength(options.prefix + key, 'utf8') > MAX_KEY_BYTES) return undefined;
    const access = await accessOf(caller, signal);
    if (access === undefined) return undefined;
    if (isFolderKey(key)) return readFolder(access, key, signal, visible ?? (() => true));
    const contents = await access.call('GetObject', signal, true, (deadline, keepSlot) =>
      access.getObject(key, options.maxObjectBytes, deadline, keepSlot),
    );
    return contents === undefined ? undefined : [contents];
  }

  async function health(signal?: AbortSignal): Promise<SourceHealth> {
    try {
      // No tenant slot: a probe must report this bucket, not wait behind a
      // sibling source's slow one.
      await access.call('HeadBucket', signal, false, (deadline) =>
        client.send(new (awsS3().HeadBucketCommand)({ Bucket: options.bucket }), { abortSignal: deadline }),
      );
      return { ok: true };
    } catch (error) {
      const cause = isGatewayError(error) ? error.cause : error;
      const refused = findEgressRefusal(cause);
      return {
        ok: false,
        detail: `HeadBucket failed: ${refused?.message ?? errorSummary(cause).name}`,
        reason: sourceFailureReason(error),
      };
    }
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    poller?.close();
    callers?.close();
    client.destroy();
  }

  function describe(entry: ListingEntry): ResourceDescriptor {
    const uri = keyToUri(sourceId, entry.key);
    if (entry.kind === 'folder') {
      const trimmed = entry.key.slice(0, -1);
      const title = `${trimmed.slice(trimmed.lastIndexOf('/') + 1)}/`;
      return { uri, name: entry.key, title, mimeType: 'inode/directory' };
    }
    const descriptor: ResourceDescriptor = {
      uri,
      name: entry.key,
      title: entry.key.slice(entry.key.lastIndexOf('/') + 1),
      // ListObjectsV2 does not return Content-Type; a HEAD per object would
      // multiply the cost of a page, so listings use the extension and reads
      // report the stored type.
      mimeType: mediaTypeOf(entry.key),
    };
    if (entry.object.size !== undefined) descriptor.size = entry.object.size;
    if (entry.object.lastModified !== undefined) {
      descriptor.annotations = { lastModified: entry.object.lastModified.toISOString() };
    }
    return descriptor;
  }

  return {
    id: sourceId,
    kind: 's3',
    ttlMs: DEFAULT_SOURCE_TTL_MS,
    owns: (uri) => uri.startsWith(uriPrefix(sourceId)),
    listResources,
    listTemplates,
    read,
    ...(poller === undefined ? {} : { watch: (listener) => poller.watch(listener), settled: () => poller.settled() }),
    health,
    close,
    backendIdentityKey: (principal) => callers?.planOf(principal).key ?? JSON.stringify(['source']),
    backendIdentityShown(principal) {
      const plan = callers?.planOf(principal);
      if (plan === undefined) return { credentials: 'the source' };
      if (plan.kind === 'assume') {
        return { roleArn: plan.roleArn, roleSessionName: plan.sessionName, sessionTags: Object.fromEntries(plan.tags) };
      }
      return plan.kind === 'refuse' ? { refused: true } : { unusable: plan.reason };
    },
  };
}
