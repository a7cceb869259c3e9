import { constants, type Dirent, type Stats } from 'node:fs';
import { lstat, open, opendir, realpath, type FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isServableName } from './path-segment.js';

/**
 * Opening a name beneath the root of a files source, race-free.
 *
 * The race: a path is a chain of lookups, and any folder on the chain can be
 * swapped for a symlink at any moment by anyone who may write to the
 * published folder. Checking the path first (`realpath` of the parent, then
 * `lstat`) and opening it by name afterwards leaves a window between the two:
 * swap `root/a` for a symlink to `/elsewhere` in that window and opening
 * `root/a/b/file` opens `/elsewhere/b/file`. `O_NOFOLLOW` does not help, since
 * it guards only the last name. A check after the open by path is no better:
 * `realpath` can see the real folder and a `stat` a moment later the symlink,
 * so every check made by path is a new lookup an attacker can steer.
 *
 * What is sound is never to look a name up by path from anywhere but a folder
 * we already hold open, i.e. `openat(dirfd, name, O_NOFOLLOW)` one name at a
 * time from a handle on the root. Node has no `openat`, but on Linux
 * `/proc/self/fd/N` is a "magic link": resolving it jumps straight to the
 * open file description `N` itself (no path is walked), so opening
 * `/proc/self/fd/N/name` looks `name` up in exactly the folder held open as
 * `N`, wherever that folder has been moved meanwhile, and `O_NOFOLLOW` then
 * applies to `name`, the only name looked up. (Linux, proc(5), the
 * `/proc/pid/fd/` entry.) Hence:
 * - each folder on the way is opened with `O_DIRECTORY | O_NOFOLLOW` inside
 *   the handle of its parent: a symlinked folder fails to open (ELOOP)
 *   instead of being followed. Names directly in the root are opened by path,
 *   which is the same lookup, since the root's own path is the operator's
 *   and nothing written below it can change it;
 * - the last name is opened with `O_NOFOLLOW | O_NONBLOCK` in the same way and
 *   `fstat`ed; only a regular file or a folder is kept (a FIFO swapped in must
 *   not block, a device must not be read);
 * - a folder is listed through `/proc/self/fd/N` of its own handle, so the
 *   names listed are those of the folder that was opened, not of whatever
 *   the path names by then, and a folder read opens its files inside that
 *   same handle (`openInFolder`).
 * The invariant: every byte and every name returned comes from an inode
 * reached from the root by real folders only, at the time each was opened.
 * The handle keeps that inode even if its name is swapped right after. (A
 * writer who moves a folder we hold out of the root meanwhile gets us to
 * read what they put in it: nothing they could not have published anyway.)
 *
 * A symlink as the last name is allowed only to a servable regular file
 * inside the root (one URI per file, see `isServableRealPath`). Its target is
 * found by `realpath`, which may race, but that is only a hint: the target is
 * then opened by the same walk from the root with no symlink allowed at all,
 * so a steered `realpath` can only make the read fail, never leave the root.
 *
 * Without `/proc` (not Linux, or a sandbox that hides it) the lookups fall
 * back to whole paths checked again after opening (the handle's device and
 * inode against a fresh `lstat`, and `realpath` unchanged), which narrows the
 * window but cannot close it (the race test, forced onto it, still saw one or
 * two leaks in 10,000 reads); the source warns about it at start.
 */

/** A regular file or folder opened beneath the root; close `handle` when done. */
export interface OpenedEntry {
  handle: FileHandle;
  /** `fstat` of the handle: the opened inode, whatever its name says now. */
  stats: Stats;
  /** The real path it was opened as; never leaves this package. */
  path: string;
}

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const FOLDER_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// O_NONBLOCK: a file swapped for a FIFO must not block the open.
const LAST_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

let procFds: Promise<boolean> | undefined;

/**
 * Whether `/proc/self/fd/N/name` opens `name` inside the open folder `N` here
 * (Linux with `/proc` mounted). Probed once per process, on `/`.
 */
export function canOpenBeneathHandles(): Promise<boolean> {
  procFds ??= probeProcFds();
  return procFds;
}

async function probeProcFds(): Promise<boolean> {
  try {
    const top = await open('/', FOLDER_FLAGS);
    try {
      const viaProc = await open(`/proc/self/fd/${top.fd}/.`, FOLDER_FLAGS);
      try {
        const [direct, indirect] = await Promise.all([top.stat(), viaProc.stat()]);
        return direct.dev === indirect.dev && direct.ino === indirect.ino;
      } finally {
        await viaProc.close();
      }
    } finally {
      await top.close();
    }
  } catch {
    return false;
  }
}

/**
 * Opens `segments` (each already checked by `isServableName`) beneath
 * `realRoot` (a real path): the root itself for no segments. `undefined` when
 * the entry is missing, is reached through a symlinked folder, is a symlink
 * to anything but a servable file inside the root, or is neither a regular
 * file nor a folder. Other I/O errors are thrown.
 */
export function openBeneathRoot(realRoot: string, segments: readonly string[]): Promise<OpenedEntry | undefined> {
  return notFoundAsUndefined(walk(realRoot, undefined, segments, true));
}

/**
 * Opens the entry `name` of `folder` (opened beneath `realRoot`), looked up in
 * that very folder, by the rules of `openBeneathRoot`.
 */
export function openInFolder(realRoot: string, folder: OpenedEntry, name: string): Promise<OpenedEntry | undefined> {
  return notFoundAsUndefined(walk(realRoot, folder, [name], true));
}

async function notFoundAsUndefined(opening: Promise<OpenedEntry | undefined>): Promise<OpenedEntry | undefined> {
  try {
    return await opening;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * The direct children of an opened folder, as read from that very folder: at
 * most `maxEntries` of them (the first the OS returns), so a huge folder
 * costs bounded time and memory.
 */
export async function listOpenedFolder(folder: OpenedEntry, maxEntries: number): Promise<Dirent[]> {
  const byHandle = await canOpenBeneathHandles();
  const dir = await opendir(byHandle ? `/proc/self/fd/${folder.handle.fd}` : folder.path);
  const children: Dirent[] = [];
  try {
    for await (const dirent of dir) {
      if (children.length >= maxEntries) break;
      children.push(dirent);
    }
  } finally {
    // Breaking out of `for await` closes the handle already; closing again throws.
    await dir.close().catch(() => undefined);
  }
  // Without /proc the listing was read by path: it counts only if the path
  // still names the folder we checked once it has been read.
  if (!byHandle && !(await stillNamedBy(folder))) {
    throw Object.assign(new Error('the folder moved while it was read'), { code: 'ENOENT' });
  }
  return children;
}

/**
 * Opens `names` one by one, each inside the folder handle of the one before,
 * starting at `from` (left open: the caller owns it) or else at the root.
 * Folders on the way must be real folders; the last name may be a symlink
 * only if `symlinkLastAllowed` (see `openSymlinkTarget`).
 */
async function walk(
  realRoot: string,
  from: OpenedEntry | undefined,
  names: readonly string[],
  symlinkLastAllowed: boolean,
): Promise<OpenedEntry | undefined> {
  const byHandle = await canOpenBeneathHandles();
  // No handle yet means "at the root": names directly in it are opened by
  // path, which is as good as a lookup in a root handle, since the root's own
  // path is the operator's (nothing below the root can change it).
  let current = from?.handle;
  let path = from?.path ?? realRoot;
  let owned = from === undefined;
  try {
    for (const [i, name] of names.entries()) {
      const last = i === names.length - 1;
      const childPath = join(path, name);
      const lookup = current !== undefined && byHandle ? `/proc/self/fd/${current.fd}/${name}` : childPath;
      let child: FileHandle;
      try {
        child = await open(lookup, last ? LAST_FLAGS : FOLDER_FLAGS);
      } catch (error) {
        // ELOOP under O_NOFOLLOW: the name is a symlink.
        if (!last || !symlinkLastAllowed || (error as NodeJS.ErrnoException).code !== 'ELOOP') throw error;
        return await openSymlinkTarget(realRoot, childPath);
      }
      if (owned) await current?.close();
      current = child;
      owned = true;
      path = childPath;
    }
    current ??= await open(realRoot, FOLDER_FLAGS); // no names: the root itself
    const stats = await current.stat();
    if (!stats.isFile() && !stats.isDirectory()) return undefined;
    const opened = { handle: current, stats, path };
    if (!byHandle && !(await stillNamedBy(opened))) return undefined;
    owned = false; // handed over to the caller
    return opened;
  } finally {
    if (owned) await current?.close();
  }
}

/** The servable regular file inside the root that the symlink at `linkPath` names, opened by a walk. */
async function openSymlinkTarget(realRoot: string, linkPath: string): Promise<OpenedEntry | undefined> {
  const target = await realpath(linkPath);
  if (!isServableRealPath(realRoot, target)) return undefined;
  const opened = await walk(realRoot, undefined, relative(realRoot, target).split(sep), false);
  if (opened === undefined || opened.stats.isFile()) return opened;
  await opened.handle.close(); // a symlinked folder would give its files a second URI
  return undefined;
}

/** The fallback check: `path` still leads, through no symlink, to the opened inode. */
async function stillNamedBy(opened: OpenedEntry): Promise<boolean> {
  try {
    if ((await realpath(opened.path)) !== opened.path) return false;
    const now = await lstat(opened.path);
    return now.dev === opened.stats.dev && now.ino === opened.stats.ino;
  } catch {
    return false;
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
