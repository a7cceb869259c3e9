import { formatBytes, isGatewayError, type ResourceContents, type VisibleUri } from '@mcpgw/core';
import type { ListedObject } from './listing-walk.js';
import { MAX_LIST_KEYS, type S3Access } from './s3-access.js';
import { isSafeRelativeKey, keyToUri } from './uri.js';

/**
 * ListObjectsV2 calls one folder read may make looking for objects the caller
 * can see, so a caller who sees little of a large folder cannot make one read
 * walk all of it (the catalog bounds a listing page the same way).
 */
const MAX_FOLDER_LIST_CALLS = 10;
/** Concurrent GetObject calls of one folder read (each also takes a tenant slot). */
const FOLDER_READ_CONCURRENCY = 4;

/** Why a folder read's note says objects were left out. */
type FolderOmission = 'more' | 'maybe';

/**
 * A folder read: the objects directly under the folder that the caller may
 * see (`visible`), in key order, as long as they fit `folderRead` (count and
 * total bytes) and each fits `maxObjectBytes`. The first object that does
 * not fit ends the read (so the result is always a prefix of the caller's
 * view of the folder in key order), and a final text/plain entry with the
 * folder's own URI says what was left out. An existing folder with no
 * objects directly under it (for this caller) gets that entry alone, never
 * an empty `contents` (MCP 2026-07-28, Resources, "Error Handling").
 *
 * Hidden objects are dropped from the listing before anything else: they
 * are never fetched, and neither the count nor the note describes them
 * (nor a subfolder the caller may not see).
 */
export async function readFolder(
  access: S3Access,
  key: string,
  signal: AbortSignal | undefined,
  visible: VisibleUri,
): Promise<ResourceContents[] | undefined> {
  const { maxObjects, maxTotalBytes } = access.options.folderRead;
  const view = await listFolder(access, key, signal, visible);
  if (view === undefined) return undefined;

  let omitted: FolderOmission | undefined = view.unlisted ? 'maybe' : undefined;
  const chosen: ListedObject[] = [];
  let budget = maxTotalBytes;
  for (const child of view.objects) {
    const size = child.size ?? 0;
    if (chosen.length === maxObjects || size > access.options.maxObjectBytes || size > budget) {
      omitted = 'more';
      break;
    }
    chosen.push(child);
    budget -= size;
  }

  const fetched = await fetchAll(access, chosen, signal);
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
      uri: keyToUri(access.sourceId, key),
      mimeType: 'text/plain',
      text: folderNote(access, contents.length, omitted, view.subfolders),
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
async function listFolder(
  access: S3Access,
  key: string,
  signal: AbortSignal | undefined,
  visible: VisibleUri,
): Promise<{ objects: ListedObject[]; subfolders: boolean; unlisted: boolean } | undefined> {
  const { maxObjects } = access.options.folderRead;
  const seen = (relativeKey: string) =>
    isSafeRelativeKey(relativeKey) && visible(keyToUri(access.sourceId, relativeKey));
  const objects: ListedObject[] = [];
  let subfolders = false;
  let exists = key === '';
  let token: string | undefined;
  for (let calls = 0; calls < MAX_FOLDER_LIST_CALLS; calls++) {
    const listing = await access.list('ListObjectsV2', signal, {
      Prefix: access.options.prefix + key,
      Delimiter: '/',
      // The first call asks for what an unrestricted caller needs; later
      // calls only happen when hidden keys took room, so ask for a full page.
      MaxKeys: calls === 0 ? Math.min(maxObjects + 1, MAX_LIST_KEYS) : MAX_LIST_KEYS,
      ContinuationToken: token,
    });
    const prefixes = access.relativePrefixes(listing.CommonPrefixes);
    if ((listing.Contents?.length ?? 0) + prefixes.length > 0) exists = true;
    objects.push(...access.relativeObjects(listing.Contents).filter((child) => child.key !== key && seen(child.key)));
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
function folderNote(access: S3Access, shown: number, omitted: FolderOmission | undefined, subfolders: boolean): string {
  const { maxObjects, maxTotalBytes } = access.options.folderRead;
  const folders = subfolders ? ` It has subfolders; list resources to see them.` : '';
  if (omitted === undefined) return `This folder has no objects directly under it.${folders}`;
  const rest = omitted === 'more' ? 'there are more' : 'there may be more';
  return (
    `Showing the first ${shown} objects directly under this folder; ${rest}. ` +
    `A folder read returns at most ${maxObjects} objects and ${formatBytes(maxTotalBytes)} in total ` +
    `(each object at most ${formatBytes(access.options.maxObjectBytes)}), in key order, ` +
    `stopping at the first object that does not fit. Read the others by their own URIs.${folders}`
  );
}

/**
 * GetObject for each chosen child, a few at a time, each bounded by its
 * listed size: an object that grew since the listing is `changed` (the read
 * stops there), one deleted meanwhile is `gone`. The first failure aborts
 * the rest.
 */
async function fetchAll(
  access: S3Access,
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
        const contents = await access.call('GetObject', linked, true, (deadline) =>
          access.getObject(child.key, child.size ?? 0, deadline),
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
