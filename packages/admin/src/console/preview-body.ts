import type { FormFields } from './entity-forms.js';

/** The form fields that carry one caller to preview: claims (JSON), their issuer, or a token. */
export interface PreviewFieldNames {
  readonly claims: string;
  readonly issuer: string;
  readonly token: string;
}

/** What a pasted caller became: nothing typed, the `previewAs` body, or why it is no JSON object of claims. */
export type PreviewBody =
  { empty: true } | { empty: false; body: unknown } | { empty: false; invalid: string; member: 'claims' | 'token' };

/**
 * A paste larger than this is refused before it is parsed: a token or a
 * claims object is a few KiB, and the preview is no place for more.
 */
export const MAX_PASTE_CHARACTERS = 16 * 1024;

/**
 * One caller's fields as the `previewAs` operation's body, which validates
 * the rest (an object of claims, a token's shape) and maps the claims as
 * the tenant's issuer would. Only what no JSON body can say is decided here.
 */
export function previewBodyOf(fields: FormFields, names: PreviewFieldNames): PreviewBody {
  const claims = (fields[names.claims] ?? '').trim();
  const issuer = (fields[names.issuer] ?? '').trim();
  const token = (fields[names.token] ?? '').trim();
  if (claims === '' && token === '' && issuer === '') return { empty: true };
  for (const [member, text] of [
    ['claims', claims],
    ['token', token],
  ] as const) {
    if (text.length > MAX_PASTE_CHARACTERS) {
      return {
        empty: false,
        member,
        invalid: `is over ${MAX_PASTE_CHARACTERS / 1024} KiB: paste one token or claims object`,
      };
    }
  }
  if (claims === '') return { empty: false, body: { token, ...(issuer === '' ? {} : { issuer }) } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(claims);
  } catch {
    return { empty: false, member: 'claims', invalid: 'must be a JSON object of claims, e.g. {"sub": "alice"}' };
  }
  return {
    empty: false,
    body: { claims: parsed, ...(token === '' ? {} : { token }), ...(issuer === '' ? {} : { issuer }) },
  };
}
