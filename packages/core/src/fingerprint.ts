/**
 * What a source looked like at one moment: a key per published object (a
 * path, an S3 key, a table) and a value that changes whenever the object's
 * resource would read differently (an ETag, an mtime and size, a hash).
 */
export type Fingerprint = ReadonlyMap<string, string>;

/** The keys that differ between two fingerprints, each list in key order. */
export interface FingerprintDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

/** Compares two fingerprints key by key; linear in their sizes. */
export function diffFingerprints(before: Fingerprint, after: Fingerprint): FingerprintDiff {
  const added: string[] = [];
  const removed: string[] = [];
  const changed: string[] = [];
  for (const [key, value] of after) {
    const previous = before.get(key);
    if (previous === undefined) added.push(key);
    else if (previous !== value) changed.push(key);
  }
  for (const key of before.keys()) if (!after.has(key)) removed.push(key);
  const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return { added: added.sort(byKey), removed: removed.sort(byKey), changed: changed.sort(byKey) };
}
