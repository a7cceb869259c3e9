import { describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth-error.js';
import { extractBearerToken } from '../src/bearer-token.js';

function request(headers: string[], url = '/t/acme/mcp', bodyHasAccessToken = false) {
  return { rawHeaders: headers, url, bodyHasAccessToken };
}

function refusal(fn: () => unknown): AuthError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AuthError);
    return error as AuthError;
  }
  throw new Error('expected an AuthError');
}

describe('extractBearerToken (RFC 6750 section 2, MCP "Token Requirements")', () => {
  it('reads the token of a Bearer header, scheme case-insensitive', () => {
    expect(extractBearerToken(request(['Host', 'x', 'Authorization', 'Bearer abc.def-_~+/=']))).toBe('abc.def-_~+/=');
    expect(extractBearerToken(request(['authorization', 'bearer tok']))).toBe('tok');
    expect(extractBearerToken(request(['AUTHORIZATION', 'BEARER  tok']))).toBe('tok');
  });

  it('returns undefined when no Authorization header is present (challenge without error)', () => {
    expect(extractBearerToken(request(['Host', 'x']))).toBeUndefined();
  });

  it('two Authorization headers → 400 invalid_request', () => {
    const error = refusal(() =>
      extractBearerToken(request(['Authorization', 'Bearer a', 'authorization', 'Bearer b'])),
    );
    expect(error.code).toBe('invalid_request');
  });

  it('a token in the query string → 400 invalid_request, even beside a header', () => {
    for (const url of ['/t/acme/mcp?access_token=abc', '/t/acme/mcp?x=1&access_token=', '/mcp?access%5Ftoken=abc']) {
      const error = refusal(() => extractBearerToken(request(['Authorization', 'Bearer abc'], url)));
      expect(error.code).toBe('invalid_request');
      expect(error.message).not.toContain('abc');
    }
    expect(extractBearerToken(request(['Authorization', 'Bearer abc'], '/mcp?token=1&x=access_token'))).toBe('abc');
  });

  it('a token in a form body → 400 invalid_request', () => {
    const error = refusal(() => extractBearerToken(request([], '/mcp', true)));
    expect(error.code).toBe('invalid_request');
  });

  it('another scheme, or an empty header, counts as no credentials (RFC 6750 section 3.1: no error code)', () => {
    for (const value of ['Basic dXNlcjpwYXNz', 'basic', 'DPoP abc', 'Bearerabc', 'Negotiate a b', '', '   ']) {
      expect(extractBearerToken(request(['Authorization', value]))).toBeUndefined();
    }
    // Still refused when a token hides elsewhere: the request then uses more than one method.
    const error = refusal(() =>
      extractBearerToken(request(['Authorization', 'Basic dXNlcjpwYXNz'], '/mcp?access_token=x')),
    );
    expect(error.code).toBe('invalid_request');
  });

  it('Bearer with a missing or malformed token → 400 invalid_request', () => {
    for (const value of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer a,b', 'Bearer "abc"', 'Bearer =abc']) {
      const error = refusal(() => extractBearerToken(request(['Authorization', value])));
      expect(error.code).toBe('invalid_request');
    }
  });
});
