import type { UriSpace } from '@mcpgw/core';
import { compileUriPattern } from './uri-pattern.js';

/**
 * Why a grant's URI pattern can never match a URI of its source, or
 * `undefined` when it can. Such a pattern is almost always a typo that
 * silently grants nothing (`file://docs/...` with the source id as the
 * authority, a doubled slash, another source's id), so the config loader
 * refuses it at load with this reason.
 */
export function grantPatternProblem(pattern: string, space: UriSpace, sourceId: string): string | undefined {
  if (!space.emptySegments) {
    // RFC 3986 section 3: `scheme://authority/path?query`. Only a pattern that
    // spells out `scheme://` before any wildcard is checked (so its `://` is
    // the URI's), and only its path: from the `/` after the authority to `?`.
    const authorityAt = pattern.indexOf('://');
    const wildcard = pattern.indexOf('*');
    const queryAt = pattern.indexOf('?');
    const doubled = authorityAt === -1 ? -1 : pattern.indexOf('//', authorityAt + 3);
    if (doubled !== -1 && (wildcard === -1 || authorityAt < wildcard) && (queryAt === -1 || doubled < queryAt)) {
      return `it has an empty path segment ('//'), and no URI of source '${sourceId}' has one`;
    }
  }
  const compiled = compileUriPattern(pattern);
  if (space.prefixes.some((prefix) => compiled.matchesSomeUriStartingWith(prefix))) return undefined;
  const [only, ...others] = space.prefixes;
  if (only === undefined) return `source '${sourceId}' has no URIs`;
  if (others.length > 0) {
    const shown = space.prefixes.slice(0, 5).join(', ');
    return `no URI of source '${sourceId}' can match it (they start with ${shown}${space.prefixes.length > 5 ? ', …' : ''})`;
  }
  return `${mismatch(pattern, only, sourceId)}; every URI of source '${sourceId}' starts with ${only}`;
}

/** The first of scheme, authority and source id where the pattern's literal start differs from the prefix. */
function mismatch(pattern: string, prefix: string, sourceId: string): string {
  const wildcard = pattern.indexOf('*');
  const literal = wildcard === -1 ? pattern : pattern.slice(0, wildcard);
  const have = uriParts(literal, wildcard === -1);
  const want = uriParts(prefix, false);
  if (have.scheme === undefined) {
    // RFC 3986 section 3.1: a URI begins with its scheme, before any `/`.
    return wildcard === -1 || literal.includes('/') ? 'it has no scheme' : 'it cannot match';
  }
  if (have.scheme !== want.scheme) return `its scheme is '${have.scheme}:'`;
  if (have.authority !== undefined && have.authority !== want.authority) {
    const theirs = want.authority === '' ? 'none' : `'${want.authority}'`;
    return `it has the authority '${have.authority}' (between '//' and the next '/'), and these URIs have ${theirs}`;
  }
  if (have.firstSegment !== undefined && want.firstSegment === sourceId && have.firstSegment !== sourceId) {
    return `it names '${have.firstSegment}', not this grant's source '${sourceId}'`;
  }
  return 'it cannot match';
}

interface UriParts {
  scheme: string | undefined;
  authority: string | undefined;
  firstSegment: string | undefined;
}

/**
 * Scheme, authority and first path segment (RFC 3986 section 3), each only
 * once `text` holds all of it: a part may go on past the end of a pattern's
 * literal start, unless the pattern is all literal (`complete`).
 */
function uriParts(text: string, complete: boolean): UriParts {
  const parts: UriParts = { scheme: undefined, authority: undefined, firstSegment: undefined };
  const colon = text.indexOf(':');
  if (colon === -1 || text.lastIndexOf('/', colon) !== -1) return parts;
  parts.scheme = text.slice(0, colon);
  if (!text.startsWith('//', colon + 1)) return parts;
  const pathAt = text.indexOf('/', colon + 3);
  if (pathAt === -1) return parts;
  parts.authority = text.slice(colon + 3, pathAt);
  const segmentEnd = text.indexOf('/', pathAt + 1);
  if (segmentEnd !== -1 || complete)
    parts.firstSegment = text.slice(pathAt + 1, segmentEnd === -1 ? undefined : segmentEnd);
  return parts;
}
