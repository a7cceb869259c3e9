import { watch, type FSWatcher, type Stats } from 'node:fs';
import { join } from 'node:path';
import { Backoff, ChangeDetector, ChangeHub, CondensedWarning, type FingerprintUris, type Logger } from '@mcpgw/core';
import { toFileUri } from './file-uri.js';
import { openBeneathRoot } from './open-beneath-root.js';
import { walkFolder, type WalkEntry } from './walk-folder.js';

/** A burst of changes within this window is looked at once: at most one rescan per window. */
export const WATCH_COALESCE_MS = 250;
/**
 * After a rescan the next one waits at least this many times as long as the
 * rescan took, so rescanning a large tree takes at most a fifth of the time
 * however fast a writer changes it.
 */
const SCAN_GAP_FACTOR = 4;
/** Folders watched at most (one inotify watch each); changes deeper in a bigger tree go unnoticed. */
export const MAX_WATCHED_FOLDERS = 1_000;
/** Concurrent stats while fingerprinting, leaving libuv's thread pool to requests. */
const STAT_CONCURRENCY = 2;

export interface FolderWatcherOptions {
  /** The real path of the published root. */
  realRoot: string;
  sourceId: string;
  /** The walk's bound (the source's `maxEntries`). */
  maxEntries: number;
  logger: Logger;
  /** Called after every rescan that follows a change, before listeners hear of it (drops cached walks). */
  onRescan?: () => void;
}

/**
 * Change detection for a files source. Node's recursive
 * `fs.watch` on Linux re-reads and re-watches folders synchronously inside
 * every event, following symlinks, so a writer swapping a folder for a
 * symlink in a loop kept the event loop busy for seconds. Here each real
 * folder of the walk (never a symlink) gets a plain, non-recursive watch
 * whose callback only sets a flag; a rescan (the bounded asynchronous walk
 * plus a size/mtime fingerprint) runs at most once per `WATCH_COALESCE_MS`
 * and after a gap proportional to its own duration, and the shared
 * `ChangeHub` compares fingerprints and fans out. Work per event is constant;
 * work per rescan is bounded by `maxEntries` and `MAX_WATCHED_FOLDERS`.
 */
export class FolderWatcher extends ChangeDetector {
  readonly #options: FolderWatcherOptions;
  protected readonly hub: ChangeHub;
  readonly #backoff = new Backoff();
  readonly #failing: CondensedWarning;
  /** Watched folders by fingerprint key, with the inode watched (a folder replaced at the same path is watched again). */
  readonly #watchers = new Map<string, { watcher: FSWatcher; ino: number }>();
  #run = 0;
  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  #scanning = false;
  #dirty = false;
  #lastScanMs = 0;
  #capWarned = false;
  #limitWarned = false;

  constructor(options: FolderWatcherOptions) {
    super();
    this.#options = options;
    this.#failing = new CondensedWarning(options.logger, 'folder rescan failed; list changes are reported late');
    this.hub = new ChangeHub({
      sourceId: options.sourceId,
      logger: options.logger,
      uris: fileFingerprintUris(options.sourceId),
      start: () => this.#start(),
      stop: () => this.#stop(),
    });
  }

  /**
   * Resolves once events already delivered by the OS have been handled and
   * no rescan is waiting or running (tests).
   */
  override async settled(): Promise<void> {
    // File system events queued before this call are read in the next poll phase.
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    await this.hub.settled();
  }

  close(): void {
    this.hub.close();
  }

  #start(): void {
    this.#running = true;
    this.#run += 1;
    this.#backoff.reset();
    // The root first, so changes during the baseline scan are not lost.
    this.#attach('/', [], undefined);
    this.#schedule(0);
  }

  #stop(): void {
    this.#running = false;
    this.#run += 1;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wake?.();
    this.#wake = undefined;
    for (const { watcher } of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }

  /** The whole per-event work: constant, whatever the event rate. */
  #onEvent(filename: string | Buffer | null): void {
    if (typeof filename === 'string' && filename.startsWith('.')) return; // hidden names are not published
    if (!this.#running) return;
    if (this.#timer !== undefined || this.#scanning) {
      this.#dirty = true;
      return;
    }
    this.#schedule(Math.max(WATCH_COALESCE_MS, this.#lastScanMs * SCAN_GAP_FACTOR));
  }

  #schedule(delayMs: number): void {
    const run = this.#run;
    let wake!: () => void;
    const waited = new Promise<void>((resolve) => (wake = resolve));
    const timer = setTimeout(wake, delayMs);
    timer.unref();
    this.#timer = timer;
    this.#wake = wake;
    void this.hub.track(
      waited.then(() => {
        // A stop and a new start may have scheduled another wait meanwhile: leave that one alone.
        if (this.#timer === timer) {
          this.#timer = undefined;
          this.#wake = undefined;
        }
        return this.#scan(run);
      }),
    );
  }

  async #scan(run: number): Promise<void> {
    if (!this.#running || run !== this.#run) return;
    this.#scanning = true;
    this.#dirty = false;
    const started = performance.now();
    let retryInMs: number | undefined;
    try {
      const walk = await walkFolder(this.#options.realRoot, this.#options.maxEntries);
      const { fingerprint, folders } = await this.#fingerprint(walk.entries);
      if (!this.#running || run !== this.#run) return;
      const attachedNew = this.#reconcile(folders);
      if (this.hub.hasBaseline) this.#options.onRescan?.();
      this.hub.compare(fingerprint);
      this.#backoff.reset();
      this.#failing.recovered();
      // Something written into a folder before its watch existed is seen by one more scan.
      if (attachedNew) this.#dirty = true;
    } catch (error) {
      retryInMs = this.#backoff.next();
      this.#failing.failed({ code: (error as NodeJS.ErrnoException).code ?? 'unknown' }, retryInMs);
    } finally {
      this.#scanning = false;
      this.#lastScanMs = performance.now() - started;
    }
    if (!this.#running || run !== this.#run) return;
    const gap = Math.max(WATCH_COALESCE_MS, this.#lastScanMs * SCAN_GAP_FACTOR);
    if (retryInMs !== undefined) this.#schedule(Math.max(gap, retryInMs));
    else if (this.#dirty) this.#schedule(gap);
  }

  /** Keys and size/mtime of every listed entry, and the inode of every real folder. */
  async #fingerprint(entries: readonly WalkEntry[]) {
    const fingerprint = new Map<string, string>();
    const folders = new Map<string, { segments: readonly string[]; ino: number }>();
    for (let i = 0; i < entries.length; i += STAT_CONCURRENCY) {
      const batch = entries.slice(i, i + STAT_CONCURRENCY);
      // Stats come from a handle opened beneath the root, as reads do, never through a swapped folder.
      const resolved = await Promise.all(batch.map((e) => statBeneathRoot(this.#options.realRoot, e.segments)));
      batch.forEach((entry, j) => {
        const stats = resolved[j]?.stats;
        if (stats === undefined) return; // vanished since the walk
        const key = fingerprintKey(entry.segments, entry.kind === 'directory');
        if (entry.kind === 'directory') {
          if (!stats.isDirectory()) return;
          fingerprint.set(key, 'folder');
          folders.set(key, { segments: entry.segments, ino: stats.ino });
        } else if (stats.isFile()) {
          fingerprint.set(key, `${stats.size}:${stats.mtimeMs}`);
        }
      });
    }
    return { fingerprint, folders };
  }

  /** Watches exactly the folders of the last scan (up to the cap); returns whether any watch is new. */
  #reconcile(folders: Map<string, { segments: readonly string[]; ino: number }>): boolean {
    for (const [key, watched] of this.#watchers) {
      if (watched.ino === -1 || folders.get(key)?.ino === watched.ino) continue;
      watched.watcher.close();
      this.#watchers.delete(key);
    }
    let attachedNew = false;
    for (const [key, folder] of folders) {
      const watched = this.#watchers.get(key);
      if (watched !== undefined) {
        watched.ino = folder.ino;
        continue;
      }
      if (this.#watchers.size >= MAX_WATCHED_FOLDERS) {
        if (!this.#capWarned) {
          this.#capWarned = true;
          this.#options.logger.warn(
            { maxWatchedFolders: MAX_WATCHED_FOLDERS },
            'the folder tree has more folders than are watched; changes in the rest go unnoticed',
          );
        }
        break;
      }
      if (this.#attach(key, folder.segments, folder.ino)) attachedNew = true;
    }
    return attachedNew;
  }

  /** A non-recursive watch on one folder; false when it could not be set up. */
  #attach(key: string, segments: readonly string[], ino: number | undefined): boolean {
    let watcher: FSWatcher;
    try {
      watcher = watch(join(this.#options.realRoot, ...segments), { persistent: false }, (_event, filename) =>
        this.#onEvent(filename),
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A folder gone meanwhile is seen by the next scan; a watch limit is worth saying once.
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && !this.#limitWarned) {
        this.#limitWarned = true;
        this.#options.logger.warn({ code }, 'folder watch could not start; some changes go unnoticed');
      }
      return false;
    }
    watcher.on('error', () => {
      // Typically the folder was removed: drop the watch; the rescan decides what to watch.
      watcher.close();
      if (this.#watchers.get(key)?.watcher === watcher) this.#watchers.delete(key);
      this.#onEvent(null);
    });
    this.#watchers.get(key)?.watcher.close();
    this.#watchers.set(key, { watcher, ino: ino ?? -1 });
    return true;
  }
}

/** `/` for the root, `a/b/` for a folder, `a/b.txt` for a file. */
function fingerprintKey(segments: readonly string[], directory: boolean): string {
  return directory ? `${segments.join('/')}/` : segments.join('/');
}

function keySegments(key: string): string[] {
  const trimmed = key.endsWith('/') ? key.slice(0, -1) : key;
  return trimmed === '' ? [] : trimmed.split('/');
}

/** A key's resource, and the folder directly above it (a folder read returns its direct files). */
function fileFingerprintUris(sourceId: string): FingerprintUris {
  return {
    uri: (key) => toFileUri(sourceId, keySegments(key), key.endsWith('/')),
    containers: (key) => {
      const segments = keySegments(key);
      return segments.length === 0 ? [] : [toFileUri(sourceId, segments.slice(0, -1), true)];
    },
  };
}

/** `fstat` of the entry opened beneath the root; undefined when it vanished or is no longer servable. */
async function statBeneathRoot(realRoot: string, segments: readonly string[]): Promise<{ stats: Stats } | undefined> {
  const opened = await openBeneathRoot(realRoot, segments);
  if (opened === undefined) return undefined;
  await opened.handle.close();
  return { stats: opened.stats };
}
