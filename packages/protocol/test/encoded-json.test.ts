import { describe, expect, it } from 'vitest';
import { bytesToContents } from '@mcpgw/core';
import { EncodedJson, serializeResponse } from '../src/encoded-json.js';
import type { JsonRpcResponseBody } from '../src/dispatch.js';

/** The response as the wire carries it. */
const wire = (body: JsonRpcResponseBody): string => {
  const serialized = serializeResponse(body);
  return typeof serialized === 'string' ? serialized : serialized.toString('utf8');
};

describe('serializeResponse', () => {
  const resources = [{ uri: 'test://a/"quoted"', name: 'ünïcödé \u2028' }];

  it('writes encoded members as they are and parses as the same response as JSON.stringify', () => {
    const plain = {
      jsonrpc: '2.0' as const,
      id: 'req-"7"',
      result: { resultType: 'complete', resources, nextCursor: 'abc', ttlMs: 5, skipped: undefined },
    };
    const encoded = { ...plain, result: { ...plain.result, resources: new EncodedJson(JSON.stringify(resources)) } };
    const text = wire(encoded);
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(plain)));
    expect(text).toContain(JSON.stringify(resources));
    // Held as bytes too: the response is assembled as bytes, and still the same JSON.
    const json = JSON.stringify(resources);
    const asBytes = { ...plain, result: { ...plain.result, resources: new EncodedJson(json, Buffer.from(json)) } };
    expect(Buffer.isBuffer(serializeResponse(asBytes))).toBe(true);
    expect(JSON.parse(wire(asBytes))).toEqual(JSON.parse(JSON.stringify(plain)));
    // Plain JSON.stringify of a body holding an EncodedJson still yields the right value.
    expect(JSON.parse(JSON.stringify(encoded))).toEqual(JSON.parse(text));
  });

  it('serializes error responses and numeric ids unchanged', () => {
    const error = { jsonrpc: '2.0' as const, id: 3, error: { code: -32602, message: 'bad' } };
    expect(wire(error)).toBe(JSON.stringify(error));
    expect(JSON.parse(wire({ jsonrpc: '2.0', id: 0, result: {} }))).toEqual({
      jsonrpc: '2.0',
      id: 0,
      result: {},
    });
  });

  it('writes binary contents as pieces that join into the same JSON, blob for blob', () => {
    const bytes = Uint8Array.from({ length: 200_001 }, (_, i) => (i * 7) % 256);
    const contents = [
      bytesToContents('s3:///b/one.bin', 'application/octet-stream', bytes),
      { uri: 'test://t', text: 'plain "text"' },
      bytesToContents('s3:///b/two.bin', 'image/png', bytes.subarray(0, 5)),
    ];
    const body = { jsonrpc: '2.0' as const, id: 1, result: { contents, ttlMs: 0 } };
    const serialized = serializeResponse(body);
    expect(typeof serialized).not.toBe('string');
    const parsed = JSON.parse(wire(body)) as { result: { contents: Array<{ blob?: string }> } };
    expect(parsed).toEqual(JSON.parse(JSON.stringify(body)));
    expect(Buffer.from(parsed.result.contents[0]!.blob!, 'base64')).toEqual(Buffer.from(bytes));
  });
});
