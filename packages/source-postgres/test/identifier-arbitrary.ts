import fc from 'fast-check';

/** No lone surrogates (they have no UTF-8 form, so no catalog name holds one). */
function wellFormed(s: string): boolean {
  try {
    encodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
}

/** Any string Postgres accepts as an identifier (no NUL, at most 63 bytes) that a catalog can hold. */
export const identifier = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 63 })
  .filter((s) => !s.includes('\0') && Buffer.byteLength(s) <= 63 && wellFormed(s));
