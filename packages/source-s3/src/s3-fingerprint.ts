import type { ListingFingerprint } from './change-poller.js';
import { MAX_LIST_KEYS, type S3Access } from './s3-access.js';
import { isSafeRelativeKey } from './uri.js';

/**
 * Most keys one change-detection scan fingerprints (100 ListObjectsV2 calls,
 * a few MB of memory). Changes past it go unnoticed; a warning says so once.
 */
const MAX_FINGERPRINT_KEYS = 100_000;

/**
 * The change-detection scan of one S3 source: keys and ETags of every safe
 * object under the prefix (up to MAX_FINGERPRINT_KEYS). The warning that the
 * cap was reached is logged once per source.
 */
export function fingerprintScanner(access: S3Access): (signal: AbortSignal) => Promise<ListingFingerprint> {
  let capWarned = false;
  return async (signal) => {
    const fingerprint: ListingFingerprint = new Map();
    const prefix = access.options.prefix;
    let startAfter: string | undefined;
    for (let pages = 0; pages * MAX_LIST_KEYS < MAX_FINGERPRINT_KEYS; pages++) {
      const output = await access.list('ListObjectsV2 (change detection)', signal, {
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
    if (!capWarned) {
      capWarned = true;
      access.logger.warn(
        { maxKeys: MAX_FINGERPRINT_KEYS },
        'S3 change detection only watches the first keys of this source; later changes go unnoticed',
      );
    }
    return fingerprint;
  };
}
