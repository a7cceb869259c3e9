import { describe, expect, it } from 'vitest';
import { formatBytes } from '../src/format-bytes.js';

// One text for a size limit in every source's messages (the files and S3 sources printed
// `2 KiB` and `2 KiB (2048 bytes)` for the same limit before).
describe('formatBytes', () => {
  it('names the unit and the exact count', () => {
    expect(formatBytes(10 * 1024 * 1024)).toBe('10 MiB (10485760 bytes)');
    expect(formatBytes(2048)).toBe('2 KiB (2048 bytes)');
    expect(formatBytes(1536)).toBe('1.5 KiB (1536 bytes)');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3 GiB (3221225472 bytes)');
  });

  it('prints small sizes in bytes only', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(1023)).toBe('1023 bytes');
  });
});
