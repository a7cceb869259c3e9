import { knownJsonText } from '@mcpgw/core';
import { EncodedJson } from './encoded-json.js';

/**
 * A JSON array of `items` as text, when every item carries its own text
 * (`frozenWithJson`, e.g. a static source's descriptors): the page is then
 * joined from those texts rather than serialized member by member again.
 * Undefined as soon as one item has none, so a page of fresh objects (a
 * database's rows) is serialized whole as before, at no extra cost.
 */
export function encodeKnownArray(items: readonly unknown[]): EncodedJson | undefined {
  const parts: string[] = [];
  for (const item of items) {
    const text = typeof item === 'object' && item !== null ? knownJsonText(item) : undefined;
    if (text === undefined) return undefined;
    parts.push(text);
  }
  return new EncodedJson(`[${parts.join(',')}]`);
}
