import { errorSummary } from './error-summary.js';
import { diffFingerprints, type Fingerprint, type FingerprintDiff } from './fingerprint.js';
import type { Logger } from './logger.js';
import type { SourceChange } from './source.js';

/**
 * One change a source noticed, in the shape a live notification needs (MCP
 * 2025-11-25, "Resources": `notifications/resources/list_changed` and
 * `notifications/resources/updated`). Tenant-agnostic: the layer that sends
 * notifications knows whose source this is and filters `uris` by each
 * caller's grants before telling anyone anything.
 */
export interface ChangeEvent {
  readonly sourceId: string;
  /** `list_changed`: resources came or went. `updated`: resources read differently now. */
  readonly kind: 'list_changed' | 'updated';
  /**
   * For `list_changed`, the resources that came or went; for `updated`, the
   * resources whose contents changed. Sorted, no duplicates.
   */
  readonly uris: readonly string[];
  /**
   * For `updated`: the URIs of `uris` that read differently only because
   * resources they show changed (a folder its files, a schema its tables),
   * each with those resources (sorted). A URI not named here changed itself.
   * A caller who may see none of those resources sees no change (folder and
   * schema reads show only what the caller may see).
   */
  readonly members?: ReadonlyMap<string, readonly string[]>;
}

export type ChangeListener = (event: ChangeEvent) => void;

/** How a source names the resources a fingerprint key touches. */
export interface FingerprintUris {
  /** The resource of one key. */
  uri(key: string): string;
  /** Resources that show the key's object too (its folder, its schema), whose reads change with it. */
  containers(key: string): readonly string[];
  /**
   * For a key that is no resource of its own but part of one (a foreign key
   * in the description of the table it references): that resource, and the
   * resource the part belongs to (the table that holds the key), which a
   * caller must be able to see for the part to show. Such a key never comes
   * or goes as a resource; its change is `uri`'s, because of `because`.
   */
  part?(key: string): { readonly uri: string; readonly because: string } | undefined;
}

export interface ChangeHubOptions {
  sourceId: string;
  /** Where a throwing listener is reported. */
  logger: Logger;
  /** Starts the source's change detection; called when the first listener subscribes. */
  start?: () => void;
  /** Stops it; called when the last listener leaves. The baseline is dropped too. */
  stop?: () => void;
  /** Needed for `compare`. */
  uris?: FingerprintUris;
}

/**
 * The change fan-out every source shares: listeners subscribe and
 * unsubscribe, the source publishes events or hands over fingerprints to
 * compare, and each event reaches every listener even when one of them
 * throws (the throw is logged, never propagated into the source's timer or
 * watcher callback). Detection runs only while someone listens.
 */
export class ChangeHub {
  readonly #options: ChangeHubOptions;
  readonly #listeners = new Set<ChangeListener>();
  readonly #pending = new Set<Promise<unknown>>();
  #baseline: Fingerprint | undefined;
  #closed = false;

  constructor(options: ChangeHubOptions) {
    this.#options = options;
  }

  get sourceId(): string {
    return this.#options.sourceId;
  }

  /** Whether anyone listens (detection should run). */
  get active(): boolean {
    return this.#listeners.size > 0;
  }

  /** Adds a listener; returns its unsubscribe function (safe to call twice). */
  subscribe(listener: ChangeListener): () => void {
    if (this.#closed) return () => {};
    // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
    const entry: ChangeListener = (event) => listener(event);
    this.#listeners.add(entry);
    if (this.#listeners.size === 1) this.#options.start?.();
    return () => {
      if (!this.#listeners.delete(entry) || this.#listeners.size > 0) return;
      this.#baseline = undefined;
      this.#options.stop?.();
    };
  }

  /** Drops every listener and stops detection for good (`Source.close`); later subscriptions hear nothing. */
  close(): void {
    this.#closed = true;
    const wasActive = this.active;
    this.#listeners.clear();
    this.#baseline = undefined;
    if (wasActive) this.#options.stop?.();
  }

  /**
   * `Source.watch` on top of `subscribe`: each event as the `SourceChange`s
   * it stands for (one `list-changed` naming what came or went, one
   * `resource-updated` per URI, with `because` for a container).
   */
  watch(listener: (change: SourceChange) => void): () => void {
    return this.subscribe((event) => {
      if (event.kind === 'list_changed') {
        if (event.uris.length > 0) listener({ type: 'list-changed', uris: event.uris });
        return;
      }
      for (const uri of event.uris) {
        const because = event.members?.get(uri);
        listener(
          because === undefined ? { type: 'resource-updated', uri } : { type: 'resource-updated', uri, because },
        );
      }
    });
  }

  /** Delivers `event` to every listener subscribed now. */
  publish(event: ChangeEvent): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (error) {
        this.#options.logger.error(
          { err: errorSummary(error), sourceId: this.sourceId, kind: event.kind },
          'change listener threw',
        );
      }
    }
  }

  /**
   * Compares `next` with the previous fingerprint and publishes the
   * difference: `list_changed` naming what came or went, then `updated`
   * naming every differing key and its containers. The first fingerprint
   * after start only sets the baseline. Returns what was published.
   */
  compare(next: Fingerprint): ChangeEvent[] {
    const before = this.#baseline;
    if (!this.active) return [];
    this.#baseline = next;
    if (before === undefined) return [];
    const events = this.#events(diffFingerprints(before, next));
    for (const event of events) this.publish(event);
    return events;
  }

  /** Forgets the baseline: the next `compare` starts afresh. */
  resetBaseline(): void {
    this.#baseline = undefined;
  }

  /** Whether a baseline is set (the first comparison has happened since start). */
  get hasBaseline(): boolean {
    return this.#baseline !== undefined;
  }

  /** Registers work in flight (a scan, a debounce wait) that `settled()` waits for. */
  track<T>(work: Promise<T>): Promise<T> {
    this.#pending.add(work);
    const done = () => this.#pending.delete(work);
    work.then(done, done);
    return work;
  }

  /** Resolves once no tracked work is in flight, including work started meanwhile (tests). */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  #events(diff: FingerprintDiff): ChangeEvent[] {
    const uris = this.#options.uris;
    if (uris === undefined) throw new Error('ChangeHub.compare needs the uris option');
    const sourceId = this.sourceId;
    const events: ChangeEvent[] = [];
    const partOf = (key: string) => uris.part?.(key);
    const cameOrWent = [...diff.added, ...diff.removed].filter((key) => partOf(key) === undefined);
    if (cameOrWent.length > 0) {
      events.push({ sourceId, kind: 'list_changed', uris: sortedUnique(cameOrWent.map((key) => uris.uri(key))) });
    }
    // Each container remembers which of its members changed: a caller who sees none of them sees no change.
    const own = new Set<string>();
    const shown = new Map<string, Set<string>>();
    const note = (container: string, member: string) => {
      let members = shown.get(container);
      if (members === undefined) shown.set(container, (members = new Set()));
      members.add(member);
    };
    for (const key of [...diff.added, ...diff.removed, ...diff.changed]) {
      const part = partOf(key);
      if (part !== undefined) {
        note(part.uri, part.because);
        continue;
      }
      const uri = uris.uri(key);
      own.add(uri);
      for (const container of uris.containers(key)) note(container, uri);
    }
    if (own.size === 0 && shown.size === 0) return events;
    const members = new Map<string, string[]>();
    for (const [container, changed] of shown) if (!own.has(container)) members.set(container, [...changed].sort());
    events.push({
      sourceId,
      kind: 'updated',
      uris: sortedUnique([...own, ...shown.keys()]),
      ...(members.size === 0 ? {} : { members }),
    });
    return events;
  }
}

function sortedUnique(values: string[]): string[] {
  return [...new Set(values)].sort();
}
