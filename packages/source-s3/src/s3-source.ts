import {
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  type S3Client,
  type _Object,
  type CommonPrefix,
} from '@aws-sdk/client-s3';
import {
  bytesToContents,
  DEFAULT_SOURCE_TTL,
  errorSummary,
  formatBytes,
  GatewayError,
  isGatewayError,
  mediaTypeOf,
  type Logger,
  type Page,
  type PageRequest,
  type ResourceContents,
  type ResourceDescriptor,
  type ResourceTemplateDescriptor,
  type Source,
  type SourceChange,
  type SourceContext,
  type SourceHealth,
  type SourceTtl,
  type VisibleUri,
} from '@mcpgw/core';
import { ChangePoller, type ListingFingerprint } from './change-poller.js';
import { walkListing, type ListedObject, type ListingEntry } from './listing-walk.js';
import { effectiveMimeType } from './mime.js';
import type { S3SourceOptions } from './options.js';
import { decodePosition, encodePosition } from './position.js';
import { readBounded } from './read-bounded.js';
import { isNotFound } from './s3-errors.js';
import { compareKeys } from './key-order.js';
import { keyRanges, maxKey, outerFolder } from './key-ranges.js';
import { acquireTenantSlot, type ReleaseSlot } from './tenant-slots.js';
import { isFolderKey, isSafeRelativeKey, keyToUri, uriPrefix, uriToKey } from './uri.js';

/** S3 returns at most 1,000 keys per ListObjectsV2 call. */
const MAX_LIST_KEYS = 1000;
/** S3 keys are at most 1,024 bytes of UTF-8. */
const MAX_KEY_BYTES = 1024;
/**
 * ListObjectsV2 calls one folder read may make looking for objects the caller
 * can see, so a caller who sees little of a large folder cannot make one read
 * walk all of it (the catalog bounds a listing page the same way).
 */
const MAX_FOLDER_LIST_CALLS = 10;
/** Concurrent GetObject calls of one folder read (each also takes a tenant slot). */
const FOLDER_READ_CONCURRENCY = 4;
/**
 * Most keys one change-detection scan fingerprints (100 ListObjectsV2 calls,
 * a few MB of memory). Changes past it go unnoticed; a warning says so once.
 */
const MAX_FINGERPRINT_KEYS = 100_000;

/** Why a folder read's note says objects were left out. */
type FolderOmission = 'more' | 'maybe';

/**
 * S3 objects and folders under one bucket prefix as MCP resources
 * (issue 6). See the package README for URIs, listing order and limits.
 */
export class S3Source implements Source {
  readonly id: string;
  readonly kind = 's3';
  readonly ttl: SourceTtl = DEFAULT_SOURCE_TTL;
  /** Present only when `changeDetection.mode` is `poll`. */
  readonly watch?: (listener: (change: SourceChange) => void) => () => void;
  /** With `watch`: resolves once no change-detection scan is in flight (tests). */
  readonly settled?: () => Promise<void>;

  readonly #client: S3Client;
  readonly #options: S3SourceOptions;
  readonly #tenantId: string;
  readonly #logger: Logger;
  /** Deadline of one operation: every attempt, the wait for a tenant slot and the body. */
  readonly #operationBudgetMs: number;
  readonly #poller: ChangePoller | undefined;
  #fingerprintCapWarned = false;
  #closed = false;

  constructor(client: S3Client, options: S3SourceOptions, context: SourceContext) {
    this.id = context.sourceId;
    this.#client = client;
    this.#options = options;
    this.#tenantId = context.tenantId;
    this.#logger = context.logger;
    this.#operationBudgetMs = options.requestTimeoutMs * options.maxAttempts;
    if (options.changeDetection.mode === 'poll') {
      const poller = new ChangePoller({
        sourceId: this.id,
        intervalMs: options.changeDetection.intervalMs,
        scan: (signal) => this.#fingerprint(signal),
        toUri: (key) => keyToUri(this.id, key),
        logger: this.#logger,
      });
      this.#poller = poller;
      this.watch = (listener) => poller.watch(listener);
      this.settled = () => poller.settled();
    }
  }

  owns(uri: string): boolean {
    return uri.startsWith(uriPrefix(this.id));
  }

  /**
   * One page of the listing, in key order. With `page.prefixes` (issue 15)
   * only the key ranges the caller's grants can reach are listed: one
   * ListObjectsV2 per range at most, ranges in key order. Normalized ranges
   * are disjoint and each is contiguous in key order, so walking them one
   * after the other yields exactly the full walk's entries that lie in them,
   * in the same order, and the position stays what it always was (the last
   * key handled): a page can end inside a range or between two.
   */
  async listResources(page: PageRequest, signal?: AbortSignal): Promise<Page<ResourceDescriptor>> {
    const after = page.position === undefined ? '' : decodePosition(page.position);
    const limit = Math.max(1, Math.min(page.limit, MAX_LIST_KEYS));
    const ranges = page.prefixes === undefined ? [''] : keyRanges(this.id, page.prefixes);
    const items: ResourceDescriptor[] = [];
    let last = after;
    for (const range of ranges) {
      // Everything in a range sorting before `last` that `last` is not inside
      // was handled by an earlier page.
      if (compareKeys(range, last) < 0 && !last.startsWith(range)) continue;
      if (items.length >= limit) return { items, nextPosition: encodePosition(last) };
      // The range's own ancestor folders lie outside it (and outside what the
      // caller may see): start after the longest of them.
      const start = maxKey(last, outerFolder(range));
      const room = limit - items.length;
      const output = await this.#list('ListObjectsV2', signal, {
        Prefix: this.#options.prefix + range,
        StartAfter: start === '' ? undefined : this.#options.prefix + start,
        MaxKeys: room,
      });
      const step = walkListing(this.#relativeObjects(output.Contents), start, room, output.IsTruncated === true);
      items.push(...step.entries.map((entry) => this.#describe(entry)));
      if (step.next !== undefined) return { items, nextPosition: encodePosition(step.next) };
      last = maxKey(last, step.entries.at(-1)?.key ?? '');
    }
    return { items };
  }

  async listTemplates(): Promise<ResourceTemplateDescriptor[]> {
    return [
      {
        // RFC 6570 reserved expansion keeps "/" and percent-encoded triplets,
        // so a key whose characters are RFC 3986 pchars (or already encoded)
        // expands to the canonical URI; anything else resolves to not found.
        uriTemplate: `${uriPrefix(this.id)}{+key}`,
        name: `${this.id}-object`,
        title: `Object in ${this.id}`,
        description:
          'Any object of this S3 source, or a folder when the key ends with "/". ' +
          'key is relative to the source prefix, "/"-separated, with characters outside ' +
          'RFC 3986 pchar percent-encoded as UTF-8 (e.g. a space as %20).',
      },
    ];
  }

  async read(uri: string, signal?: AbortSignal, visible?: VisibleUri): Promise<ResourceContents[] | undefined> {
    const key = uriToKey(this.id, uri);
    if (key === undefined) return undefined;
    if (Buffer.byteLength(this.#options.prefix + key, 'utf8') > MAX_KEY_BYTES) return undefined;
    if (isFolderKey(key)) return this.#readFolder(key, signal, visible ?? (() => true));
    const contents = await this.#call('GetObject', signal, true, (deadline) =>
      this.#getObject(key, this.#options.maxObjectBytes, deadline),
    );
    return contents === undefined ? undefined : [contents];
  }

  async health(signal?: AbortSignal): Promise<SourceHealth> {
    try {
      // No tenant slot: a probe must report this bucket, not wait behind a
      // sibling source's slow one.
      await this.#call('HeadBucket', signal, false, (deadline) =>
        this.#client.send(new HeadBucketCommand({ Bucket: this.#options.bucket }), { abortSignal: deadline }),
      );
      return { ok: true };
    } catch (error) {
      const cause = isGatewayError(error) ? error.cause : error;
      return { ok: false, detail: `HeadBucket failed: ${errorSummary(cause).name}` };
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#poller?.close();
    this.#client.destroy();
  }

  /**
   * Runs one S3 operation under the operation deadline (and, unless `slot`
   * is false, a tenant slot). Backend failures become MCPGW_SOURCE_UNAVAILABLE
   * naming only the source id; the cause goes to the log.
   */
  async #call<T>(
    operation: string,
    signal: AbortSignal | undefined,
    slot: boolean,
    run: (deadline: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const timeout = AbortSignal.timeout(this.#operationBudgetMs);
    const deadline = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    let release: ReleaseSlot | undefined;
    try {
      if (slot) release = await acquireTenantSlot(this.#tenantId, this.#options.maxInFlightPerTenant, deadline);
      return await run(deadline);
    } catch (error) {
      if (isGatewayError(error)) throw error;
      // The caller gave up (client cancelled): not a backend failure.
      if (signal?.aborted === true) throw signal.reason;
      this.#logger.warn({ operation, err: errorSummary(error) }, 'S3 request failed');
      const message = timeout.aborted
        ? `S3 source "${this.id}" did not answer within ${this.#operationBudgetMs} ms`
        : `S3 source "${this.id}" is unavailable`;
      throw new GatewayError('MCPGW_SOURCE_UNAVAILABLE', message, { cause: error });
    } finally {
      release?.();
    }
  }

  #list(
    operation: string,
    signal: AbortSignal | undefined,
    params: { Prefix: string; StartAfter?: string; MaxKeys: number; Delimiter?: string; ContinuationToken?: string },
  ): Promise<ListObjectsV2CommandOutput> {
    return this.#call(operation, signal, true, (deadline) =>
      this.#client.send(new ListObjectsV2Command({ Bucket: this.#options.bucket, ...params }), {
        abortSignal: deadline,
      }),
    );
  }

  /** The object's contents, or undefined when it does not exist. Call inside #call. */
  async #getObject(key: string, maxBytes: number, deadline: AbortSignal): Promise<ResourceContents | undefined> {
    let output;
    try {
      output = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#options.bucket, Key: this.#options.prefix + key }),
        { abortSignal: deadline },
      );
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const body = output.Body as (AsyncIterable<Uint8Array> & { destroy?: () => void }) | undefined;
    const bytes =
      body === undefined
        ? Buffer.alloc(0)
        : await readBounded(body, maxBytes, output.ContentLength, () => this.#tooLarge(), deadline);
    return bytesToContents(keyToUri(this.id, key), effectiveMimeType(output.ContentType, key), bytes);
  }

  #tooLarge(): GatewayError {
    return new GatewayError(
      'MCPGW_RESOURCE_TOO_LARGE',
      `The object exceeds the ${formatBytes(this.#options.maxObjectBytes)} limit of S3 source "${this.id}"`,
    );
  }

  /**
   * A folder read: the objects directly under the folder that the caller may
   * see (`visible`), in key order, as long as they fit `folderRead` (count and
   * total bytes) and each fits `maxObjectBytes`. The first object that does
   * not fit ends the read (so the result is always a prefix of the caller's
   * view of the folder in key order), and a final text/plain entry with the
   * folder's own URI says what was left out. An existing folder with no
   * objects directly under it (for this caller) gets that entry alone, never
   * an empty `contents` (server-resources.md "Error Handling").
   *
   * Hidden objects are dropped from the listing before anything else: they
   * are never fetched, and neither the count nor the note describes them
   * (nor a subfolder the caller may not see).
   */
  async #readFolder(
    key: string,
    signal: AbortSignal | undefined,
    visible: VisibleUri,
  ): Promise<ResourceContents[] | undefined> {
    const { maxObjects, maxTotalBytes } = this.#options.folderRead;
    const view = await this.#listFolder(key, signal, visible);
    if (view === undefined) return undefined;

    let omitted: FolderOmission | undefined = view.unlisted ? 'maybe' : undefined;
    const chosen: ListedObject[] = [];
    let budget = maxTotalBytes;
    for (const child of view.objects) {
      const size = child.size ?? 0;
      if (chosen.length === maxObjects || size > this.#options.maxObjectBytes || size > budget) {
        omitted = 'more';
        break;
      }
      chosen.push(child);
      budget -= size;
    }

    const fetched = await this.#fetchAll(chosen, signal);
    const contents: ResourceContents[] = [];
    for (const result of fetched) {
      if (result === 'changed') {
        omitted = 'more';
        break;
      }
      if (result !== 'gone') contents.push(result);
    }
    if (omitted !== undefined || contents.length === 0) {
      contents.push({
        uri: keyToUri(this.id, key),
        mimeType: 'text/plain',
        text: this.#folderNote(contents.length, omitted, view.subfolders),
      });
    }
    return contents;
  }

  /**
   * The caller's view of one folder level (ListObjectsV2 with "/" as the
   * delimiter): the visible objects directly under it in key order, up to one
   * more than a read returns, and whether a visible subfolder was seen.
   * Undefined when no key at all starts with the folder (a folder exists while
   * any key does; the root always exists). Visibility is decided here, on the
   * keys alone, so nothing hidden is ever fetched or counted.
   */
  async #listFolder(
    key: string,
    signal: AbortSignal | undefined,
    visible: VisibleUri,
  ): Promise<{ objects: ListedObject[]; subfolders: boolean; unlisted: boolean } | undefined> {
    const { maxObjects } = this.#options.folderRead;
    const seen = (relativeKey: string) => isSafeRelativeKey(relativeKey) && visible(keyToUri(this.id, relativeKey));
    const objects: ListedObject[] = [];
    let subfolders = false;
    let exists = key === '';
    let token: string | undefined;
    for (let calls = 0; calls < MAX_FOLDER_LIST_CALLS; calls++) {
      const listing = await this.#list('ListObjectsV2', signal, {
        Prefix: this.#options.prefix + key,
        Delimiter: '/',
        // The first call asks for what an unrestricted caller needs; later
        // calls only happen when hidden keys took room, so ask for a full page.
        MaxKeys: calls === 0 ? Math.min(maxObjects + 1, MAX_LIST_KEYS) : MAX_LIST_KEYS,
        ContinuationToken: token,
      });
      const prefixes = this.#relativePrefixes(listing.CommonPrefixes);
      if ((listing.Contents?.length ?? 0) + prefixes.length > 0) exists = true;
      objects.push(...this.#relativeObjects(listing.Contents).filter((child) => child.key !== key && seen(child.key)));
      subfolders ||= prefixes.some(seen);
      token = listing.IsTruncated === true ? listing.NextContinuationToken : undefined;
      if (token === undefined || objects.length > maxObjects) {
        return exists ? { objects, subfolders, unlisted: false } : undefined;
      }
    }
    return exists ? { objects, subfolders, unlisted: true } : undefined;
  }

  /**
   * `omitted` is `more` when objects the caller may see were left out, and
   * `maybe` when the listing stopped at MAX_FOLDER_LIST_CALLS before its end.
   */
  #folderNote(shown: number, omitted: FolderOmission | undefined, subfolders: boolean): string {
    const { maxObjects, maxTotalBytes } = this.#options.folderRead;
    const folders = subfolders ? ` It has subfolders; list resources to see them.` : '';
    if (omitted === undefined) return `This folder has no objects directly under it.${folders}`;
    const rest = omitted === 'more' ? 'there are more' : 'there may be more';
    return (
      `Showing the first ${shown} objects directly under this folder; ${rest}. ` +
      `A folder read returns at most ${maxObjects} objects and ${formatBytes(maxTotalBytes)} in total ` +
      `(each object at most ${formatBytes(this.#options.maxObjectBytes)}), in key order, ` +
      `stopping at the first object that does not fit. Read the others by their own URIs.${folders}`
    );
  }

  /**
   * GetObject for each chosen child, a few at a time, each bounded by its
   * listed size: an object that grew since the listing is `changed` (the read
   * stops there), one deleted meanwhile is `gone`. The first failure aborts
   * the rest.
   */
  async #fetchAll(
    chosen: readonly ListedObject[],
    signal: AbortSignal | undefined,
  ): Promise<Array<ResourceContents | 'gone' | 'changed'>> {
    const controller = new AbortController();
    const linked = signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]);
    const results: Array<ResourceContents | 'gone' | 'changed'> = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < chosen.length) {
        const index = next++;
        const child = chosen[index];
        if (child === undefined) return;
        try {
          const contents = await this.#call('GetObject', linked, true, (deadline) =>
            this.#getObject(child.key, child.size ?? 0, deadline),
          );
          results[index] = contents ?? 'gone';
        } catch (error) {
          if (isGatewayError(error) && error.code === 'MCPGW_RESOURCE_TOO_LARGE') {
            results[index] = 'changed';
            continue;
          }
          controller.abort(error);
          throw error;
        }
      }
    };
    const workers = Array.from({ length: Math.min(FOLDER_READ_CONCURRENCY, chosen.length) }, worker);
    const settled = await Promise.allSettled(workers);
    const failure = settled.find((outcome) => outcome.status === 'rejected');
    if (failure !== undefined) {
      // Prefer the real failure over the aborts it caused in sibling workers.
      throw controller.signal.aborted ? controller.signal.reason : failure.reason;
    }
    return results;
  }

  #relativePrefixes(prefixes: CommonPrefix[] | undefined): string[] {
    const prefix = this.#options.prefix;
    return (prefixes ?? []).flatMap((entry) =>
      entry.Prefix?.startsWith(prefix) === true ? [entry.Prefix.slice(prefix.length)] : [],
    );
  }

  #relativeObjects(contents: _Object[] | undefined): ListedObject[] {
    const prefix = this.#options.prefix;
    const objects: ListedObject[] = [];
    for (const object of contents ?? []) {
      if (object.Key === undefined || !object.Key.startsWith(prefix)) continue;
      objects.push({ key: object.Key.slice(prefix.length), size: object.Size, lastModified: object.LastModified });
    }
    return objects;
  }

  #describe(entry: ListingEntry): ResourceDescriptor {
    const uri = keyToUri(this.id, entry.key);
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

  /** Keys and ETags of every safe object under the prefix (up to MAX_FINGERPRINT_KEYS). */
  async #fingerprint(signal: AbortSignal): Promise<ListingFingerprint> {
    const fingerprint: ListingFingerprint = new Map();
    const prefix = this.#options.prefix;
    let startAfter: string | undefined;
    for (let pages = 0; pages * MAX_LIST_KEYS < MAX_FINGERPRINT_KEYS; pages++) {
      const output = await this.#list('ListObjectsV2 (change detection)', signal, {
        Prefix: prefix,
        StartAfter: startAfter,
        MaxKeys: MAX_LIST_KEYS,
      });
      for (const object of output.Contents ?? []) {
        if (object.Key === undefined) continue;
        startAfter = object.Key;
        const key = object.Key.slice(prefix.length);
        if (key !== '' && object.Key.startsWith(prefix) && isSafeRelativeKey(key)) {
          fingerprint.set(key, object.ETag ?? '');
        }
      }
      if (output.IsTruncated !== true || startAfter === undefined) return fingerprint;
    }
    if (!this.#fingerprintCapWarned) {
      this.#fingerprintCapWarned = true;
      this.#logger.warn(
        { maxKeys: MAX_FINGERPRINT_KEYS },
        'S3 change detection only watches the first keys of this source; later changes go unnoticed',
      );
    }
    return fingerprint;
  }
}
