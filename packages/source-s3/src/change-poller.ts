import { Backoff, ChangeDetector, ChangeHub, CondensedWarning, errorSummary, type Logger } from '@mcpgw/core';

/** Relative key to ETag, for every listed object of the source. */
export type ListingFingerprint = Map<string, string>;

export interface ChangePollerOptions {
  sourceId: string;
  intervalMs: number;
  /** Lists the source; aborting the signal must end the scan. */
  scan: (signal: AbortSignal) => Promise<ListingFingerprint>;
  /** The URI of a relative key (`''` is the top folder). */
  toUri: (key: string) => string;
  logger: Logger;
  /** Retry delays after failed scans; tests pass one with a fixed random. */
  backoff?: Backoff;
}

/**
 * Polls a listing fingerprint (keys and ETags) while anyone listens and
 * hands it to the shared `ChangeHub`, which reports the differences
 * (docs/adr/0004-change-hub.md): `list_changed` when keys came or went, `updated` for
 * every differing object and the folder directly above it (a folder read
 * returns the objects directly under it). The first scan only sets the
 * baseline. Scans never overlap: the next one is scheduled when the previous
 * one ends, after the interval, or after a failure after the longer of the
 * interval and an exponential backoff (250 ms doubling to 30 s, with
 * jitter), logged once per doubling of the attempt count. The timer does not
 * keep the process alive.
 */
export class ChangePoller extends ChangeDetector {
  readonly #options: ChangePollerOptions;
  protected readonly hub: ChangeHub;
  readonly #backoff: Backoff;
  readonly #failing: CondensedWarning;
  #timer: NodeJS.Timeout | undefined;
  #scan: AbortController | undefined;
  #running = false;

  constructor(options: ChangePollerOptions) {
    super();
    this.#options = options;
    this.#backoff = options.backoff ?? new Backoff();
    this.#failing = new CondensedWarning(options.logger, 'S3 change detection scan failed; retrying');
    const parent = (key: string): string => {
      const trimmed = key.endsWith('/') ? key.slice(0, -1) : key;
      return trimmed.slice(0, trimmed.lastIndexOf('/') + 1);
    };
    this.hub = new ChangeHub({
      sourceId: options.sourceId,
      logger: options.logger,
      uris: { uri: (key) => options.toUri(key), containers: (key) => [options.toUri(parent(key))] },
      start: () => this.#start(),
      stop: () => this.#stop(),
    });
  }

  /** Stops for good (`Source.close`). */
  close(): void {
    this.hub.close();
  }

  #start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#backoff.reset();
    void this.hub.track(this.#tick());
  }

  #stop(): void {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#scan?.abort();
    this.#scan = undefined;
  }

  async #tick(): Promise<void> {
    const controller = new AbortController();
    this.#scan = controller;
    let delay = this.#options.intervalMs;
    try {
      const current = await this.#options.scan(controller.signal);
      if (!this.#running || controller.signal.aborted) return;
      this.hub.compare(current);
      this.#backoff.reset();
      this.#failing.recovered();
    } catch (error) {
      if (controller.signal.aborted) return;
      // Keep the old baseline: the next successful scan reports what changed meanwhile.
      delay = Math.max(delay, this.#backoff.next());
      this.#failing.failed({ err: errorSummary(error) }, delay);
    } finally {
      if (this.#scan === controller) this.#scan = undefined;
      if (this.#running && !controller.signal.aborted) {
        this.#timer = setTimeout(() => void this.hub.track(this.#tick()), delay);
        this.#timer.unref();
      }
    }
  }
}
