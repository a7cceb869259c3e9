import { bytesToContents, formatBytes, GatewayError, mediaTypeOf, type ResourceContents } from '@mcpgw/core';
import { toFileUri } from './file-uri.js';
import type { FilesSourceOptions } from './files-source-options.js';
import { openBeneathRoot, openInFolder, type OpenedEntry } from './open-beneath-root.js';
import { readFileBounded, TOO_LARGE } from './read-file.js';
import { readChildren, type WalkEntry } from './walk-folder.js';

/** What a files source's reads need: its id, its real root and its size bounds. */
export interface ReadScope {
  readonly sourceId: string;
  readonly realRoot: string;
  readonly options: Pick<FilesSourceOptions, 'maxFileBytes' | 'maxEntries' | 'directoryRead'>;
}

/** The contents of the file at `segments` under the root, or undefined when it is not a file. */
export async function readFileResource(
  scope: ReadScope,
  uri: string,
  segments: readonly string[],
): Promise<ResourceContents[] | undefined> {
  const { maxFileBytes } = scope.options;
  const file = await openBeneathRoot(scope.realRoot, segments);
  if (file === undefined) return undefined;
  let bytes: Buffer | typeof TOO_LARGE;
  try {
    if (!file.stats.isFile()) return undefined;
    if (file.stats.size > maxFileBytes) throw tooLarge(maxFileBytes);
    bytes = await readFileBounded(file.handle, maxFileBytes);
  } finally {
    await file.handle.close();
  }
  if (bytes === TOO_LARGE) throw tooLarge(maxFileBytes);
  return [bytesToContents(uri, mediaTypeOf(segments.at(-1) ?? ''), bytes)];
}

/**
 * A folder read: its direct files in name order, within the `directoryRead`
 * bounds. The folder stays open throughout: its files are listed from it
 * and opened inside it (see `openInFolder`).
 */
export async function readFolderResource(
  scope: ReadScope,
  segments: readonly string[],
  signal?: AbortSignal,
): Promise<ResourceContents[] | undefined> {
  const folder = await openBeneathRoot(scope.realRoot, segments);
  if (folder === undefined) return undefined;
  try {
    if (!folder.stats.isDirectory()) return undefined;
    const children = await readChildren(scope.realRoot, segments, folder, scope.options.maxEntries);
    return await readFilesOf(scope, folder, children, signal);
  } finally {
    await folder.handle.close();
  }
}

async function readFilesOf(
  scope: ReadScope,
  folder: OpenedEntry,
  children: readonly WalkEntry[],
  signal?: AbortSignal,
): Promise<ResourceContents[]> {
  const { maxFileBytes } = scope.options;
  const { maxFiles, maxTotalBytes } = scope.options.directoryRead;
  const contents: ResourceContents[] = [];
  let total = 0;
  for (const child of children) {
    signal?.throwIfAborted();
    if (child.kind !== 'file') continue;
    if (contents.length >= maxFiles) break;
    const name = child.segments.at(-1) ?? '';
    const file = await openInFolder(scope.realRoot, folder, name);
    if (file === undefined) continue;
    let bytes: Buffer | typeof TOO_LARGE;
    try {
      if (!file.stats.isFile() || file.stats.size > maxFileBytes) continue;
      if (total + file.stats.size > maxTotalBytes) break;
      bytes = await readFileBounded(file.handle, Math.min(maxFileBytes, maxTotalBytes - total));
    } finally {
      await file.handle.close();
    }
    if (bytes === TOO_LARGE) break; // grew past the remaining budget since its stat
    total += bytes.length;
    contents.push(bytesToContents(toFileUri(scope.sourceId, child.segments, false), mediaTypeOf(name), bytes));
  }
  return contents;
}

function tooLarge(maxFileBytes: number): GatewayError {
  return new GatewayError(
    'MCPGW_RESOURCE_TOO_LARGE',
    `The file exceeds the ${formatBytes(maxFileBytes)} size limit of this source`,
  );
}
