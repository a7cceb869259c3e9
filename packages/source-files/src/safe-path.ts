import type { Stats } from 'node:fs';
import { lstat, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { isServableName } from './path-segment.js';

/** Where a servable path lives on disk, and what it is. */
export interface ResolvedPath {
  /** The real (symlink-free) absolute path; never leaves this package. */
  realPath: string;
  stats: Stats;
}

/**
 * Resolves `segments` (already checked by `isServableName`) below `realRoot`
 * (itself a real path) to a regular file or folder inside the root, or
 * `undefined`. The rules, so that the same bytes are never reachable under
 * two URIs and nothing outside the root is reachable at all:
 * - no folder on the way may be a symlink (realpath of the parent must be the
 *   parent itself); this also keeps the walk free of cycles;
 * - the last name may be a symlink only to a regular file whose real path is
 *   inside the root and servable (not hidden), never to a folder;
 * - anything but a regular file or folder (FIFO, socket, device) is refused,
 *   since reading one could block or never end.
 * Missing paths resolve to `undefined`; other I/O errors are thrown.
 */
export async function resolveInside(realRoot: string, segments: readonly string[]): Promise<ResolvedPath | undefined> {
  try {
    const lexical = join(realRoot, ...segments);
    if (segments.length === 0) {
      const stats = await stat(realRoot);
      return stats.isDirectory() ? { realPath: realRoot, stats } : undefined;
    }
    if (segments.length > 1 && (await realpath(dirname(lexical))) !== dirname(lexical)) return undefined;
    const own = await lstat(lexical);
    if (own.isFile() || own.isDirectory()) return { realPath: lexical, stats: own };
    if (!own.isSymbolicLink()) return undefined;
    const target = await realpath(lexical);
    if (!isServableRealPath(realRoot, target)) return undefined;
    const stats = await stat(target);
    return stats.isFile() ? { realPath: target, stats } : undefined;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Whether `realPath` is strictly inside `realRoot` and every name on the way is servable. */
export function isServableRealPath(realRoot: string, realPath: string): boolean {
  const rel = relative(realRoot, realPath);
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || rel.startsWith(sep)) return false;
  return rel.split(sep).every(isServableName);
}

const NOT_FOUND_CODES = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'ENAMETOOLONG']);

/** Errors that mean "no such resource" rather than "the backend failed". */
export function isNotFound(error: unknown): boolean {
  return error instanceof Error && NOT_FOUND_CODES.has((error as NodeJS.ErrnoException).code ?? '');
}
