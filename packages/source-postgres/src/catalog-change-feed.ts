import type { Logger, SourceChange } from '@mcpgw/core';
import type pg from 'pg';
import type { CatalogFingerprint } from './catalog-fingerprint.js';
import { quoteIdent } from './quote-ident.js';

export interface ChangeFeedOptions {
  mode: 'event-trigger' | 'poll';
  pollIntervalMs: number;
  /** Reads the current fingerprint (in a read-only transaction). */
  fingerprint: () => Promise<CatalogFingerprint>;
  diff: (before: CatalogFingerprint, after: CatalogFingerprint) => SourceChange[];
  /** event-trigger mode: installs the trigger; a rejection falls back to polling. */
  install: () => Promise<void>;
  /** event-trigger mode: a new, unconnected client for LISTEN. */
  newClient: () => pg.Client;
  channel: string;
  logger: Logger;
}

/** Coalesces a burst of DDL (a migration) into one catalog comparison. */
const NOTIFY_DEBOUNCE_MS = 50;
const MAX_RECONNECT_DELAY_MS = 30_000;

/**
 * Turns catalog changes into SourceChange events while anyone listens. Both
 * modes compare fingerprints, so events are the same; the trigger only says
 * *when* to look. After the LISTEN connection drops it reconnects with
 * backoff and compares once, so nothing changed in between is missed.
 */
export class CatalogChangeFeed {
  readonly #options: ChangeFeedOptions;
  readonly #listeners = new Set<(change: SourceChange) => void>();
  #baseline: CatalogFingerprint | undefined;
  #timer: NodeJS.Timeout | undefined;
  #client: pg.Client | undefined;
  #running = false;
  #checking: Promise<void> | undefined;
  #again = false;
  #failures = 0;
  #usePolling: boolean;
  #installed = false;

  constructor(options: ChangeFeedOptions) {
    this.#options = options;
    this.#usePolling = options.mode === 'poll';
  }

  /** Adds a listener; the feed starts with the first and stops after the last. */
  subscribe(listener: (change: SourceChange) => void): () => void {
    this.#listeners.add(listener);
    if (!this.#running) {
      this.#running = true;
      void this.#start();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) void this.stop();
    };
  }

  /** Resolves once the comparison in flight, if any, is done (tests). */
  async settled(): Promise<void> {
    while (this.#checking !== undefined) await this.#checking;
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#baseline = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await client.end().catch(() => undefined);
    await this.settled();
  }

  async #start(): Promise<void> {
    try {
      // LISTEN before the baseline: DDL committed between the two is then
      // both notified and compared, never missed.
      if (!this.#usePolling) await this.#listen();
      this.#baseline = await this.#options.fingerprint();
      this.#failures = 0;
    } catch (error) {
      this.#options.logger.warn({ err: describe(error) }, 'postgres change feed could not start; retrying');
      this.#retry(() => this.#start());
      return;
    }
    if (this.#usePolling) this.#schedulePoll();
  }

  async #listen(): Promise<void> {
    if (!this.#installed) {
      try {
        await this.#options.install();
        this.#installed = true;
      } catch (error) {
        this.#options.logger.warn(
          { err: describe(error) },
          'postgres event trigger could not be installed (needs superuser); polling the catalog instead',
        );
        this.#usePolling = true;
        return;
      }
    }
    const client = this.#options.newClient();
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    client.on('notification', () => this.#requestCheck(NOTIFY_DEBOUNCE_MS));
    this.#client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.#options.channel)}`);
    } catch (error) {
      this.#client = undefined;
      await client.end().catch(() => undefined);
      throw error;
    }
    if (!this.#running) await this.stop();
  }

  #lost(client: pg.Client, error: unknown): void {
    if (this.#client !== client || !this.#running) return;
    this.#client = undefined;
    this.#options.logger.warn(
      { err: describe(error) },
      'postgres change feed lost its LISTEN connection; reconnecting',
    );
    void client.end().catch(() => undefined);
    this.#retry(async () => {
      await this.#listen();
      // Whatever changed while disconnected was not notified: compare now.
      this.#requestCheck(0);
      if (this.#usePolling) this.#schedulePoll();
    });
  }

  #retry(attempt: () => Promise<void>): void {
    if (!this.#running) return;
    const delay = Math.min(MAX_RECONNECT_DELAY_MS, 250 * 2 ** this.#failures++);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#running) return;
      attempt().then(
        () => (this.#failures = 0),
        (error: unknown) => {
          this.#options.logger.warn({ err: describe(error) }, 'postgres change feed retry failed');
          this.#retry(attempt);
        },
      );
    }, delay);
    this.#timer.unref();
  }

  #schedulePoll(): void {
    if (!this.#running) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#requestCheck(0);
      this.#schedulePoll();
    }, this.#options.pollIntervalMs);
    this.#timer.unref();
  }

  #requestCheck(delayMs: number): void {
    if (!this.#running) return;
    if (this.#checking !== undefined) {
      this.#again = true;
      return;
    }
    this.#checking = new Promise<void>((resolve) => setTimeout(resolve, delayMs))
      .then(() => this.#check())
      .finally(() => {
        this.#checking = undefined;
        if (this.#again) {
          this.#again = false;
          this.#requestCheck(0);
        }
      });
  }

  async #check(): Promise<void> {
    if (!this.#running || this.#baseline === undefined) return;
    let next: CatalogFingerprint;
    try {
      next = await this.#options.fingerprint();
    } catch (error) {
      // The next poll or notification tries again; the baseline is kept so
      // the eventual comparison still covers everything that changed.
      this.#options.logger.warn({ err: describe(error) }, 'postgres change feed could not read the catalog');
      return;
    }
    if (!this.#running) return;
    const changes = this.#options.diff(this.#baseline, next);
    this.#baseline = next;
    for (const change of changes) {
      for (const listener of [...this.#listeners]) {
        try {
          listener(change);
        } catch (error) {
          this.#options.logger.error({ err: describe(error) }, 'postgres change feed listener threw');
        }
      }
    }
  }
}

function describe(error: unknown): { message: string; code?: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? { message: error.message, code } : { message: error.message };
  }
  return { message: String(error) };
}
