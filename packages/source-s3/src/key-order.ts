/**
 * S3 lists keys in ascending order of their UTF-8 bytes. JavaScript compares
 * UTF-16 code units, which disagrees for characters above U+FFFF versus
 * U+E000-U+FFFF, so keys are compared as bytes.
 */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
