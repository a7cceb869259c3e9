import type { FileHandle } from 'node:fs/promises';

/** Returned instead of the bytes when a file holds more than the limit. */
export const TOO_LARGE = Symbol('too large');

const CHUNK_BYTES = 64 * 1024;

/**
 * Reads at most `maxBytes` of the regular file open as `handle` (see
 * `openBeneathRoot`): its bytes, or `TOO_LARGE` if it holds more (also when
 * it grew since it was listed or opened).
 */
export async function readFileBounded(handle: FileHandle, maxBytes: number): Promise<Buffer | typeof TOO_LARGE> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) return TOO_LARGE;
    chunks.push(chunk.subarray(0, bytesRead));
  }
  return Buffer.concat(chunks, total);
}

/** The first `bytes` bytes of the regular file open as `handle` (fewer if it is shorter). */
export async function readHead(handle: FileHandle, bytes: number): Promise<Buffer> {
  const buffer = Buffer.alloc(bytes);
  const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
  return buffer.subarray(0, bytesRead);
}
