import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '@mcpgw/core';

/** Changes within this window are reported once. */
export const WATCH_COALESCE_MS = 250;

/**
 * Watches the folder tree at `realRoot` (recursive `fs.watch`, on Linux
 * supported since Node 20) and calls `onChange` at most once per
 * `WATCH_COALESCE_MS` while changes keep coming. Changes under hidden names
 * are ignored, since those are not published. A watcher error (for example
 * the inotify watch limit) is logged and ends watching; it never throws.
 * Returns a function that stops watching.
 */
export function watchFolder(realRoot: string, onChange: () => void, logger: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;

  const stop = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    watcher?.close();
    watcher = undefined;
  };

  try {
    watcher = watch(realRoot, { recursive: true, persistent: false }, (_event, filename) => {
      if (filename !== null && filename.split(/[\\/]/).some((name) => name.startsWith('.'))) return;
      if (timer !== undefined) return;
      timer = setTimeout(() => {
        timer = undefined;
        onChange();
      }, WATCH_COALESCE_MS);
      timer.unref();
    });
    watcher.on('error', (error: NodeJS.ErrnoException) => {
      logger.warn({ code: error.code }, 'folder watch failed; list changes are no longer reported');
      stop();
    });
  } catch (error) {
    logger.warn({ code: (error as NodeJS.ErrnoException).code }, 'folder watch could not start');
  }
  return stop;
}
