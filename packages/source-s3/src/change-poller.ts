import type { Logger, SourceChange } from '@mcpgw/core';

/** Relative key to ETag, for every listed object of the source. */
export type ListingFingerprint = Map<string, string>;

export interface ChangePollerOptions {
  intervalMs: number;
  /** Lists the source; aborting the signal must end the scan. */
  scan: (signal: AbortSignal) => Promise<ListingFingerprint>;
  /** The URI of a relative key. */
  toUri: (key: string) => string;
  /** Receives the events of one scan that found differences. */
  emit: (changes: SourceChange[]) => void;
  logger: Logger;
}

/**
 * Polls a listing fingerprint (keys and ETags) and reports differences
 * (issue 6 "Change detection"). The first scan only sets the baseline. Scans
 * never overlap: the next one is scheduled when the previous one ends, and
 * the timer does not keep the process alive.
 */
export class ChangePoller {
  readonly #options: ChangePollerOptions;
  #baseline: ListingFingerprint | undefined;
  #timer: NodeJS.Timeout | undefined;
  #scan: AbortController | undefined;
  #running = false;

  constructor(options: ChangePollerOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#tick();
  }

  stop(): void {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#scan?.abort();
    this.#scan = undefined;
    this.#baseline = undefined;
  }

  async #tick(): Promise<void> {
    const controller = new AbortController();
    this.#scan = controller;
    try {
      const current = await this.#options.scan(controller.signal);
      if (!this.#running || controller.signal.aborted) return;
      if (this.#baseline !== undefined) {
        const changes = diffFingerprints(this.#baseline, current, this.#options.toUri);
        if (changes.length > 0) this.#options.emit(changes);
      }
      this.#baseline = current;
    } catch (error) {
      if (controller.signal.aborted) return;
      // Keep the old baseline: the next successful scan reports what changed meanwhile.
      this.#options.logger.warn({ err: errorSummary(error) }, 'S3 change detection scan failed');
    } finally {
      if (this.#scan === controller) this.#scan = undefined;
      if (this.#running && !controller.signal.aborted) {
        this.#timer = setTimeout(() => void this.#tick(), this.#options.intervalMs);
        this.#timer.unref();
      }
    }
  }
}

/**
 * Events for a fingerprint change: `list-changed` when keys came or went, and
 * `resource-updated` for every object whose ETag changed and for the folder
 * directly above every added, removed or changed key (a folder read returns
 * the objects directly under it).
 */
export function diffFingerprints(
  before: ListingFingerprint,
  after: ListingFingerprint,
  toUri: (key: string) => string,
): SourceChange[] {
  let membershipChanged = false;
  const updated = new Set<string>();
  const folders = new Set<string>();
  const parent = (key: string): string => {
    const trimmed = key.endsWith('/') ? key.slice(0, -1) : key;
    return trimmed.slice(0, trimmed.lastIndexOf('/') + 1);
  };
  for (const [key, etag] of after) {
    const previous = before.get(key);
    if (previous === etag) continue;
    if (previous === undefined) membershipChanged = true;
    else updated.add(key);
    folders.add(parent(key));
  }
  for (const key of before.keys()) {
    if (after.has(key)) continue;
    membershipChanged = true;
    folders.add(parent(key));
  }
  const changes: SourceChange[] = membershipChanged ? [{ type: 'list-changed' }] : [];
  for (const key of [...updated, ...folders]) changes.push({ type: 'resource-updated', uri: toUri(key) });
  return changes;
}

/** Name and message of an error, for logs (operator-facing; never returned to clients). */
export function errorSummary(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}
