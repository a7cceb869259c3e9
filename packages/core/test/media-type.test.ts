import { describe, expect, it } from 'vitest';
import { mediaTypeOf } from '../src/media-type.js';

describe('mediaTypeOf', () => {
  it('reads the extension of the last path segment, case-insensitively', () => {
    expect(mediaTypeOf('docs/guide.md')).toBe('text/markdown');
    expect(mediaTypeOf('REPORT.PDF')).toBe('application/pdf');
    expect(mediaTypeOf('a.b/c.json')).toBe('application/json');
  });

  it('says TypeScript, not MPEG transport stream, for .ts and its kin', () => {
    for (const name of ['src/index.ts', 'a.mts', 'a.cts', 'view.TSX'])
      expect(mediaTypeOf(name)).toBe('text/x-typescript');
  });

  it('falls back to application/octet-stream for no or an unknown extension', () => {
    expect(mediaTypeOf('Makefile')).toBe('application/octet-stream');
    expect(mediaTypeOf('.hidden')).toBe('application/octet-stream');
    expect(mediaTypeOf('dir.d/noext')).toBe('application/octet-stream');
    expect(mediaTypeOf('a.unknown-extension')).toBe('application/octet-stream');
  });
});
