import type { IncomingMessage } from 'node:http';

/** The forms carry a decision and a token: a few hundred bytes. Anything far larger is not ours. */
export const MAX_FORM_BYTES = 8 * 1024;

/** Why a form body was refused. */
export type FormRefusal = 'unsupported-media-type' | 'too-large';

/**
 * Reads an HTML form's body (`application/x-www-form-urlencoded`, HTML
 * Living Standard, "URL-encoded form data"), at most {@link MAX_FORM_BYTES}.
 * Returns the fields, or why the body was refused; reading stops at the cap.
 */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams | FormRefusal> {
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/x-www-form-urlencoded') return 'unsupported-media-type';
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_FORM_BYTES) return 'too-large';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return 'too-large';
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
