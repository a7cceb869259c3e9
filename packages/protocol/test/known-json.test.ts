import { frozenWithJson } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { encodeKnownArray } from '../src/known-json.js';
import { serializeResponse } from '../src/encoded-json.js';

const descriptor = (i: number) => ({
  uri: `test://docs/${i}`,
  name: `doc ${i}`,
  title: `Doc "${i}" ✓`,
  annotations: { audience: ['user'], priority: 0.5 },
});

describe('values that carry their own JSON text', () => {
  it('are joined into the same JSON a serializer would write, and sent as the same value', () => {
    const plain = [descriptor(1), descriptor(2)];
    const known = plain.map((d) => frozenWithJson(d));
    const encoded = encodeKnownArray(known);
    expect(encoded?.text).toBe(JSON.stringify(plain));
    const body = serializeResponse({ jsonrpc: '2.0', id: 4, result: { resources: encoded, ttlMs: 0 } });
    expect(JSON.parse(String(body))).toEqual({ jsonrpc: '2.0', id: 4, result: { resources: plain, ttlMs: 0 } });
  });

  it('leave a page with any fresh object to be serialized whole', () => {
    expect(encodeKnownArray([frozenWithJson(descriptor(1)), descriptor(2)])).toBeUndefined();
    expect(encodeKnownArray([frozenWithJson(descriptor(1)), 'a string'])).toBeUndefined();
    expect(encodeKnownArray([])?.text).toBe('[]');
  });

  it('cannot drift from their text: the copy is deeply frozen and detached from the original', () => {
    const original = descriptor(3);
    const known = frozenWithJson(original);
    expect(() => {
      (known as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      known.annotations.audience.push('assistant');
    }).toThrow(TypeError);
    original.annotations.priority = 1;
    expect(encodeKnownArray([known])?.text).toBe(JSON.stringify([descriptor(3)]));
  });
});
