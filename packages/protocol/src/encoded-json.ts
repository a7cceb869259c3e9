import type { JsonRpcResponseBody } from './dispatch.js';

/**
 * A JSON value held as its serialized text, e.g. a cached page's `resources`
 * array: the response is written around it, so a cache hit neither parses
 * the stored text nor serializes the same value again. Whoever builds one
 * vouches that `text` is one complete, valid JSON value.
 */
export class EncodedJson {
  constructor(readonly text: string) {}

  /** Whoever serializes it with plain `JSON.stringify` still gets the right value (at the price of a parse). */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * The JSON text of a response body. Members of `result` that are
 * {@link EncodedJson} are written as they are; everything else goes through
 * `JSON.stringify`. Object member order carries no meaning in JSON
 * (RFC 8259 section 4), so the text parses as the same value either way.
 */
export function serializeResponse(body: JsonRpcResponseBody): string {
  if (!('result' in body)) return JSON.stringify(body);
  let result = '';
  for (const [name, value] of Object.entries(body.result)) {
    if (value === undefined) continue;
    const text = value instanceof EncodedJson ? value.text : JSON.stringify(value);
    result += `${result === '' ? '' : ','}${JSON.stringify(name)}:${text}`;
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{${result}}}`;
}
