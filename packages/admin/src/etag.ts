import type { IncomingHttpHeaders } from 'node:http';
import { AdminProblem } from './problem.js';

/** A strong entity tag (RFC 9110 section 8.8.3) from a stored row's version. */
export const etagOf = (version: number): string => `"${version}"`;

/** What the request's conditional headers ask of a write. */
export interface WritePreconditions {
  /** From If-Match: the version the writer last read. */
  readonly ifVersion?: number;
  /** From If-Match: `*` (the target must exist). */
  readonly mustExist?: boolean;
  /** From If-None-Match: `*` (the target must not exist). */
  readonly create?: boolean;
}

/**
 * Reads If-Match / If-None-Match (RFC 9110 sections 13.1.1, 13.1.2). If-Match
 * compares strongly: a weak tag (`W/"3"`) or one this API never issued can
 * never match, so the write fails with 412 like any stale one. A list of tags
 * is accepted; every tag but the current version fails the same way, so only
 * the first well-formed one is kept.
 */
export function readPreconditions(request: { readonly headers: IncomingHttpHeaders }): WritePreconditions {
  const ifMatch = request.headers['if-match'];
  const ifNoneMatch = request.headers['if-none-match'];
  const result: { ifVersion?: number; mustExist?: boolean; create?: boolean } = {};
  if (typeof ifNoneMatch === 'string') {
    if (ifNoneMatch.trim() !== '*') {
      throw new AdminProblem('invalid-request', 'If-None-Match accepts only "*" on writes (create only if absent)', [
        { header: 'If-None-Match', detail: 'use "*"' },
      ]);
    }
    result.create = true;
  }
  if (typeof ifMatch === 'string') {
    const value = ifMatch.trim();
    if (value === '*') result.mustExist = true;
    else {
      const strong = value
        .split(',')
        .map((tag) => tag.trim())
        .find((tag) => /^"\d{1,15}"$/.test(tag));
      // No strong tag of ours: nothing can match (RFC 9110 section 13.1.1), so -1 always fails.
      result.ifVersion = strong === undefined ? -1 : Number(strong.slice(1, -1));
    }
  }
  return result;
}
