import { describe, expect, it } from 'vitest';
import { EncodedJson, serializeResponse } from '../src/index.js';

// Issue 13: a cached result's JSON text goes out as it is, spliced into the
// response; the bytes must parse as the very response a plain serialization gives.

describe('serializeResponse', () => {
  const resources = [{ uri: 'test://a/"quoted"', name: 'ünïcödé \u2028' }];

  it('writes encoded members as they are and parses as the same response as JSON.stringify', () => {
    const plain = {
      jsonrpc: '2.0' as const,
      id: 'req-"7"',
      result: { resultType: 'complete', resources, nextCursor: 'abc', ttlMs: 5, skipped: undefined },
    };
    const encoded = { ...plain, result: { ...plain.result, resources: new EncodedJson(JSON.stringify(resources)) } };
    const text = serializeResponse(encoded);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(plain)));
    expect(text).toContain(JSON.stringify(resources));
    // Plain JSON.stringify of a body holding an EncodedJson still yields the right value.
    expect(JSON.parse(JSON.stringify(encoded))).toEqual(JSON.parse(text));
  });

  it('serializes error responses and numeric ids unchanged', () => {
    const error = { jsonrpc: '2.0' as const, id: 3, error: { code: -32602, message: 'bad' } };
    expect(serializeResponse(error)).toBe(JSON.stringify(error));
    expect(JSON.parse(serializeResponse({ jsonrpc: '2.0', id: 0, result: {} }))).toEqual({
      jsonrpc: '2.0',
      id: 0,
      result: {},
    });
  });
});
