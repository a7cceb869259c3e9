import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSafeRelativeKey, keyToUri, uriToKey } from '../src/uri.js';

describe('S3 source URIs', () => {
  it('spell keys as s3:///{sourceId}/{encoded key} with no bucket or host', () => {
    expect(keyToUri('docs', 'reports/Q1 2024/summé.txt')).toBe('s3:///docs/reports/Q1%202024/summ%C3%A9.txt');
    expect(keyToUri('docs', 'a/')).toBe('s3:///docs/a/');
    // pchar sub-delims stay literal; "?" and "#" would end the path, so they are encoded.
    expect(keyToUri('docs', "x(1)&y=z:@!'.md")).toBe("s3:///docs/x(1)&y=z:@!'.md");
    expect(keyToUri('docs', 'what?#now[1]%')).toBe('s3:///docs/what%3F%23now%5B1%5D%25');
  });

  it('round-trip every safe key, including unicode, spaces and empty segments', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (key) => {
        fc.pre(isSafeRelativeKey(key));
        const uri = keyToUri('src', key);
        expect(new URL(uri).protocol).toBe('s3:');
        expect(uriToKey('src', uri)).toBe(key);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuse traversal, control characters, backslashes and foreign prefixes', () => {
    for (const uri of [
      's3:///src/../secret.txt',
      's3:///src/a/../../b',
      's3:///src/./a',
      's3:///src/a/..',
      's3:///src/%2E%2E/x', // non-canonical spelling of ".."
      's3:///src/a%2Fb', // an encoded "/" is not a second spelling of a folder
      's3:///src/a%00b',
      's3:///src/a%0Ab',
      's3:///src/a%7F',
      's3:///src/a%C2%85', // C1 control U+0085
      's3:///src/a%5Cb', // backslash
      's3:///src/%FF', // not UTF-8
      's3:///src/%E2%82', // truncated UTF-8
      's3:///src/%zz',
      's3:///src/%e2%82%ac', // lower-case hex is not the canonical spelling
      's3:///src/a b', // a raw space is not a URI character
      's3:///src/a?x=1',
      's3:///src/a#frag',
      's3:///source/x', // another source
      's3:///sr/x',
      's3://src/x', // authority form
      's3:///src', // no trailing slash: not in the space
    ]) {
      expect(uriToKey('src', uri), uri).toBeUndefined();
    }
  });

  it('accept the root folder and folder URIs', () => {
    expect(uriToKey('src', 's3:///src/')).toBe('');
    expect(uriToKey('src', 's3:///src/a%20b/')).toBe('a b/');
    expect(uriToKey('src', 's3:///src/%E2%82%AC')).toBe('€');
  });
});
