import { describe, expect, it } from 'vitest';
import { effectiveMimeType } from '../src/mime.js';

describe('effectiveMimeType', () => {
  it('keeps a specific stored Content-Type, without parameters', () => {
    expect(effectiveMimeType('text/plain; charset=utf-8', 'a.bin')).toBe('text/plain');
  });

  // The files source always said text/x-typescript for .ts; S3 said video/mp2t for the same file.
  it('reads a .ts object with a generic Content-Type as TypeScript, like the files source', () => {
    expect(effectiveMimeType('binary/octet-stream', 'src/index.ts')).toBe('text/x-typescript');
    expect(effectiveMimeType(undefined, 'src/index.ts')).toBe('text/x-typescript');
  });

  it('falls back to application/octet-stream for an unknown extension', () => {
    expect(effectiveMimeType(undefined, 'data/blob')).toBe('application/octet-stream');
  });
});
