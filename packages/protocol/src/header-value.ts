/**
 * The Base64 sentinel form of `Mcp-Name` and `Mcp-Param-*` values:
 * `=?base64?{value}?=` (2026-07-28 transports, Value Encoding). The markers
 * are case-sensitive.
 */
const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** RFC 9110 field values: visible ASCII, space and horizontal tab. */
const FIELD_VALUE = /^[\x20-\x7e\t]*$/;

export type DecodedHeader = { ok: true; value: string } | { ok: false; reason: string };

/** Decodes a header value that may use the sentinel form; reports invalid characters or encodings. */
export function decodeHeaderValue(raw: string): DecodedHeader {
  if (!FIELD_VALUE.test(raw)) {
    return { ok: false, reason: 'contains characters not allowed in an HTTP header value' };
  }
  if (!(raw.startsWith(SENTINEL_PREFIX) && raw.endsWith(SENTINEL_SUFFIX) && raw.length >= 11)) {
    return { ok: true, value: raw };
  }
  const encoded = raw.slice(SENTINEL_PREFIX.length, raw.length - SENTINEL_SUFFIX.length);
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) {
    return { ok: false, reason: 'is not valid base64 inside the =?base64?...?= form' };
  }
  try {
    const value = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
    return { ok: true, value };
  } catch {
    return { ok: false, reason: 'does not decode to UTF-8 text' };
  }
}
