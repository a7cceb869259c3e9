/**
 * The URI space of an S3 source: `s3:///{sourceId}/{key relative to prefix}`.
 *
 * The authority is empty on purpose: in the usual `s3://bucket/key` form it
 * names a bucket, and neither bucket nor endpoint may appear in our URIs (they
 * are deployment details, and a URI must stay the same across deployments). The first path segment is the
 * source id, so a URI routes to exactly one source of the tenant.
 *
 * Each key segment is percent-encoded as an RFC 3986 `pchar` (section 3.3):
 * unreserved characters, sub-delims, ":" and "@" stay literal, everything
 * else becomes upper-case UTF-8 `%XX` triplets (section 2.1). Only this one
 * canonical spelling resolves: the policy layer grants URI patterns, so a
 * second spelling of the same key (`%61` for `a`, `%2F` for `/`) could slip
 * past a pattern meant to exclude it.
 */

/** RFC 3986 section 2.2 sub-delims plus ":" and "@", which encodeURIComponent escapes but pchar allows. */
const PCHAR_ESCAPES = /%(?:24|26|2B|2C|3B|3D|3A|40)/g;

/** `s3:///{sourceId}/`: every URI of the source starts with this. */
export function uriPrefix(sourceId: string): string {
  return `s3:///${sourceId}/`;
}

/** Percent-encodes one key segment into its canonical pchar form. */
function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(PCHAR_ESCAPES, (triplet) => decodeURIComponent(triplet));
}

/** The canonical URI path of a relative key (segments encoded, "/" kept). */
export function encodeKeyPath(relativeKey: string): string {
  return relativeKey.split('/').map(encodeSegment).join('/');
}

/** The URI of a relative key (an object, or a folder when it ends with "/"). */
export function keyToUri(sourceId: string, relativeKey: string): string {
  return uriPrefix(sourceId) + encodeKeyPath(relativeKey);
}

/**
 * The relative key a URI names, or `undefined` when the URI is not in this
 * source's space, is not the canonical spelling, or names an unsafe key
 * (see {@link isSafeRelativeKey}). `''` is the source's root folder.
 */
export function uriToKey(sourceId: string, uri: string): string | undefined {
  const prefix = uriPrefix(sourceId);
  if (!uri.startsWith(prefix)) return undefined;
  const path = uri.slice(prefix.length);
  let key: string;
  try {
    // Throws on malformed triplets and on bytes that are not UTF-8.
    key = decodeURIComponent(path);
    if (encodeKeyPath(key) !== path) return undefined;
  } catch {
    return undefined;
  }
  return isSafeRelativeKey(key) ? key : undefined;
}

/**
 * C0 and C1 controls, DEL, and the backslash (a path separator for clients on
 * Windows that map URIs to files).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\\]/;

/** A UTF-16 surrogate without its pair: not representable in UTF-8, so never a real key. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a key relative to the prefix may be published: no `.` or `..`
 * segment (MCP 2026-07-28, Resources, "Security Considerations": no directory
 * traversal, even where the store itself would not interpret them), no
 * control characters, NUL or backslash, and no lone UTF-16 surrogate. Keys
 * that fail are neither listed nor readable.
 */
export function isSafeRelativeKey(relativeKey: string): boolean {
  if (UNSAFE_CHARACTERS.test(relativeKey) || LONE_SURROGATE.test(relativeKey)) return false;
  return relativeKey.split('/').every((segment) => segment !== '.' && segment !== '..');
}

/** Whether a relative key names a folder (the root `''`, or a key ending with "/"). */
export function isFolderKey(relativeKey: string): boolean {
  return relativeKey === '' || relativeKey.endsWith('/');
}
