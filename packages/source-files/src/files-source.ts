import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  DEFAULT_SOURCE_TTL_MS,
  formatBytes,
  GatewayError,
  invalidPosition,
  isGatewayError,
  mediaTypeOf,
  type Page,
  type PageRequest,
  type ResourceContents,
  type ResourceDescriptor,
  type Source,
  type SourceChange,
  type SourceContext,
} from '@mcpgw/core';
import { fileUriPrefix, parseFileUri, toFileUri } from './file-uri.js';
import type { FilesSourceOptions } from './files-source-options.js';
import { FolderWatcher } from './folder-watcher.js';
import { MARKDOWN_HEAD_BYTES, summarizeMarkdown } from './markdown-summary.js';
import { DIRECTORY_MIME_TYPE } from './media-type.js';
import { isServableName } from './path-segment.js';
import { createFolderListingCache } from './folder-listing-cache.js';
import { canOpenBeneathHandles, isNotFound, openBeneathRoot, type OpenedEntry } from './open-beneath-root.js';
import { readHead } from './read-file.js';
import { readFileResource, readFolderResource, type ReadScope } from './read-resources.js';
import type { WalkEntry } from './walk-folder.js';
import { walkPage, WHOLE_TREE, type WalkPage } from './sorted-walk.js';
import { walkBlocks } from './walk-blocks.js';

/**
 * Creates a source publishing the folder `options.root` (resolved against
 * `context.configDir`). Fails, naming the option, when the root does not
 * exist or is not a folder, so a bad path stops startup.
 */
export async function createFilesSource(options: FilesSourceOptions, context: SourceContext): Promise<Source> {
  const { sourceId, logger } = context;
  const realRoot = await openRoot(options.root, context);
  if (!(await canOpenBeneathHandles())) {
    logger.warn(
      { root: options.root },
      '/proc/self/fd is not available (not Linux?): a writer inside the folder who swaps a folder for a symlink ' +
        'may briefly expose files outside it; reads are checked after opening, which narrows but does not close that window',
    );
  }
  const { maxFileBytes, maxEntries } = options;
  const { maxFiles, maxTotalBytes } = options.directoryRead;
  const prefix = fileUriPrefix(sourceId);
  const readScope: ReadScope = { sourceId, realRoot, options };
  const warned = new Set<string>();
  const folders = createFolderListingCache(realRoot, maxEntries);
  // A change seen by the watcher drops the reused folder listings, so the next listing sees it at once.
  const changes = new FolderWatcher({
    realRoot,
    sourceId,
    maxEntries,
    logger,
    onRescan: () => folders.clear(),
  });

  /** Warns once per distinct message, so a listing that is rebuilt often does not flood the log. */
  function warnOnce(key: string, fields: object, message: string): void {
    if (warned.has(key)) return;
    if (warned.size >= 1_000) warned.clear(); // keys name paths; renames must not grow it forever
    warned.add(key);
    logger.warn(fields, message);
  }

  const folderDescription = (segments: readonly string[]) =>
    `${segments.length === 0 ? 'The top folder of this source' : `The folder "${segments.join('/')}/"`}. ` +
    `Reading it returns the files directly inside it (not those in subfolders), in name order, ` +
    `at most ${maxFiles} files and ${formatBytes(maxTotalBytes)} in all; reading stops at the first file ` +
    `past either limit, and files over ${formatBytes(maxFileBytes)} are left out. Read those one by one.`;

  /** The descriptor of a walk entry, or `undefined` if it vanished since the walk. */
  async function describe(entry: WalkEntry): Promise<ResourceDescriptor | undefined> {
    const opened = await openBeneathRoot(realRoot, entry.segments);
    if (opened === undefined) return undefined;
    try {
      return await describeOpened(entry, opened);
    } finally {
      await opened.handle.close();
    }
  }

  async function describeOpened(
    entry: WalkEntry,
    { handle, stats }: OpenedEntry,
  ): Promise<ResourceDescriptor | undefined> {
    const lastModified = stats.mtime.toISOString();
    const name = entry.segments.at(-1) ?? sourceId;
    if (entry.kind === 'directory') {
      if (!stats.isDirectory()) return undefined;
      return {
        uri: toFileUri(sourceId, entry.segments, true),
        name,
        description: folderDescription(entry.segments),
        mimeType: DIRECTORY_MIME_TYPE,
        annotations: { lastModified },
      };
    }
    if (!stats.isFile()) return undefined;
    const mimeType = mediaTypeOf(name);
    const descriptor: ResourceDescriptor = {
      uri: toFileUri(sourceId, entry.segments, false),
      name,
      mimeType,
      size: stats.size,
      annotations: { lastModified },
    };
    if (mimeType === 'text/markdown') {
      const path = entry.segments.join('/');
      try {
        const head = await readHead(handle, MARKDOWN_HEAD_BYTES);
        // Not fatal: the head may end inside a multi-byte character.
        const summary = summarizeMarkdown(new TextDecoder().decode(head));
        if (summary.invalidFrontMatter === true) {
          warnOnce(`front-matter:${path}`, { path }, 'front matter is not a YAML mapping; ignored');
        }
        if (summary.title !== undefined) descriptor.title = summary.title;
        if (summary.description !== undefined) descriptor.description = summary.description;
      } catch (error) {
        // Listed without a title: a read will report the failure properly.
        warnOnce(`head:${path}`, { path, code: (error as NodeJS.ErrnoException).code }, 'could not read the file head');
      }
    }
    return descriptor;
  }

  return {
    id: sourceId,
    kind: 'files',
    ttlMs: DEFAULT_SOURCE_TTL_MS,

    /**
     * One page of the sorted depth-first walk, resumed from the position:
     * the page reads the folders on its way, not the whole tree,
     * so its cost does not grow with the tree. With `page.prefixes` only the
     * granted subfolders are walked, as deep as the grants reach (`page.ranges`),
     * passing over what the caller may not see (`page.visible`), at most
     * `MAX_EXAMINED_PER_PAGE` entries per page. A folder with more than `maxEntries`
     * entries is listed up to that many and the page says so (`incomplete`).
     */
    async listResources(page: PageRequest, signal?: AbortSignal): Promise<Page<ResourceDescriptor>> {
      // Position: the relative path of the last entry of the previous page,
      // as `/` + names joined by `/`. Resuming by path rather than by index
      // means an entry added or removed meanwhile shifts nothing.
      const after = page.position === undefined ? undefined : parsePosition(page.position);
      const blocks = page.prefixes === undefined ? WHOLE_TREE : walkBlocks(sourceId, page.ranges ?? page.prefixes);
      if (blocks.length === 0) return { items: [] };
      const limit = Math.max(1, Math.floor(page.limit));
      // Entries the caller may not see are passed over before they are opened and described.
      const visible = page.visible;
      const keep =
        visible === undefined
          ? undefined
          : (entry: WalkEntry) => visible(toFileUri(sourceId, entry.segments, entry.kind === 'directory'));
      let walked: WalkPage;
      try {
        walked = await walkPage(folders.listing, blocks, after, limit, keep);
      } catch (error) {
        throw unavailable(sourceId, 'list', error);
      }
      if (walked.truncated) {
        warnOnce(
          'truncated',
          { maxEntries },
          'a folder holds more entries than maxEntries; the listing shows the first maxEntries and says it is incomplete',
        );
      }
      for (const path of walked.unreadable) {
        warnOnce(`unreadable:${path}`, { path }, 'folder could not be read; skipped');
      }
      signal?.throwIfAborted();

      const described = await Promise.all(
        walked.entries.map((entry) =>
          describe(entry).catch((error: unknown) => {
            const path = entry.segments.join('/');
            const code = (error as NodeJS.ErrnoException).code;
            warnOnce(`describe:${path}`, { path, code }, 'entry could not be examined; left out of the listing');
            return undefined;
          }),
        ),
      );
      const items = described.filter((d): d is ResourceDescriptor => d !== undefined);
      const last = walked.last;
      return {
        items,
        ...(walked.more && last !== undefined ? { nextPosition: formatPosition(last) } : {}),
        ...(walked.truncated ? { incomplete: true } : {}),
      };
    },

    async listTemplates() {
      return [];
    },

    owns(uri: string): boolean {
      return uri.startsWith(prefix);
    },

    async read(uri: string, signal?: AbortSignal): Promise<ResourceContents[] | undefined> {
      const parsed = parseFileUri(sourceId, uri);
      if (parsed === undefined) return undefined;
      try {
        return parsed.directory
          ? await readFolderResource(readScope, parsed.segments, signal)
          : await readFileResource(readScope, uri, parsed.segments);
      } catch (error) {
        if (isGatewayError(error) || signal?.aborted === true) throw error;
        if (isNotFound(error)) return undefined;
        throw unavailable(sourceId, 'read', error);
      }
    },

    watch(listener: (change: SourceChange) => void): () => void {
      return changes.watch(listener);
    },

    settled: () => changes.settled(),

    async health() {
      try {
        const stats = await stat(realRoot);
        return stats.isDirectory() ? { ok: true } : { ok: false, detail: 'the root is no longer a folder' };
      } catch {
        return { ok: false, detail: 'the root folder is missing or unreadable' };
      }
    },

    async close() {
      changes.close();
    },
  };
}

/** The real path of the configured root, or an error naming the option as written. */
async function openRoot(root: string, context: SourceContext): Promise<string> {
  const where = `source "${context.sourceId}": root "${root}" (relative paths start at the config file's folder)`;
  let realRoot: string;
  try {
    realRoot = await realpath(resolve(context.configDir, root));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`${where} ${code === 'ENOENT' ? 'does not exist' : `cannot be opened (${code})`}`);
  }
  if (!(await stat(realRoot)).isDirectory()) throw new Error(`${where} is not a folder`);
  return realRoot;
}

function formatPosition(segments: readonly string[]): string {
  return `/${segments.join('/')}`;
}

function parsePosition(position: string): string[] {
  if (!position.startsWith('/')) throw invalidPosition();
  if (position === '/') return [];
  const segments = position.slice(1).split('/');
  if (!segments.every(isServableName)) throw invalidPosition();
  return segments;
}

/**
 * MCPGW_SOURCE_UNAVAILABLE for an I/O failure. The cause keeps only the error
 * code: Node's messages hold absolute paths, which must not reach even logs
 * that operators may paste into tickets.
 */
function unavailable(sourceId: string, action: 'list' | 'read', error: unknown): GatewayError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'unknown';
  return new GatewayError(
    'MCPGW_SOURCE_UNAVAILABLE',
    `Source "${sourceId}" could not ${action === 'list' ? 'list its folder' : 'read this resource'}`,
    { cause: new Error(`file system error ${code}`) },
  );
}
