import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** Returned instead of the bytes when a file holds more than the limit. */
export const TOO_LARGE = Symbol('too large');

// O_NOFOLLOW: the path was resolved to a real path just before; if the last
// name has since become a symlink, refuse rather than follow it. O_NONBLOCK:
// a file swapped for a FIFO in that window must not block the open.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CHUNK_BYTES = 64 * 1024;

/**
 * Reads at most `maxBytes` of the regular file at `realPath`: its bytes,
 * `TOO_LARGE` if it holds more (also when it grew since it was listed), or
 * `undefined` if it is no longer a regular file.
 */
export async function readFileBounded(
  realPath: string,
  maxBytes: number,
): Promise<Buffer | typeof TOO_LARGE | undefined> {
  const handle = await open(realPath, OPEN_FLAGS);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return undefined;
    if (stats.size > maxBytes) return TOO_LARGE;
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
  } finally {
    await handle.close();
  }
}

/** The first `bytes` bytes of the regular file at `realPath` (fewer if it is shorter). */
export async function readHead(realPath: string, bytes: number): Promise<Buffer> {
  const handle = await open(realPath, OPEN_FLAGS);
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
