import type { ChangeHub, ChangeListener } from './change-hub.js';
import type { SourceChange } from './source.js';

/**
 * What a source's change detection (the S3 poller, the Postgres catalog
 * feed, the files watcher) offers its source: the listener side of its
 * `ChangeHub`. Subclasses create the hub in their constructor, with their
 * own start and stop.
 */
export abstract class ChangeDetector {
  protected abstract readonly hub: ChangeHub;

  /** `Source.watch`: detection starts with the first listener and stops after the last. */
  watch(listener: (change: SourceChange) => void): () => void {
    return this.hub.watch(listener);
  }

  /** The same changes as change events (live notifications). */
  subscribe(listener: ChangeListener): () => void {
    return this.hub.subscribe(listener);
  }

  /** Resolves once no detection work is in flight (tests). */
  settled(): Promise<void> {
    return this.hub.settled();
  }
}
