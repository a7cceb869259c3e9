import {
  Backoff,
  ChangeDetector,
  ChangeHub,
  CondensedWarning,
  errorSummary,
  type FingerprintUris,
  type Logger,
} from '@mcpgw/core';
import type pg from 'pg';
import type { CatalogFingerprint } from './catalog-fingerprint.js';
import { quoteIdent } from './quote-ident.js';
import { sqlState } from './source-unavailable.js';

export interface ChangeFeedOptions {
  sourceId: string;
  mode: 'event-trigger' | 'poll';
  pollIntervalMs: number;
  /** Reads the current fingerprint (in a read-only transaction); must not log its own failures. */
  fingerprint: () => Promise<CatalogFingerprint>;
  /** The resources a fingerprint key names (a schema or a table) and contains. */
  uris: FingerprintUris;
  /** event-trigger mode: installs the trigger; a refusal by the server falls back to polling. */
  install: () => Promise<void>;
  /** event-trigger mode: a new, unconnected client for LISTEN. */
  newClient: () => pg.Client;
  channel: string;
  logger: Logger;
  /** Retry delays after failures; tests pass one with a fixed random. */
  backoff?: Backoff;
}

/** Coalesces a burst of DDL (a migration) into one catalog comparison. */
const NOTIFY_DEBOUNCE_MS = 50;

/**
 * Turns catalog changes into change events while anyone listens (the
 * fan-out and the comparison are the shared `ChangeHub`). Both modes compare
 * fingerprints, so events are the same; the trigger only says *when* to
 * look. A database that cannot be reached, at start or after the LISTEN
 * connection drops, is retried with exponential backoff and jitter (250 ms
 * doubling to 30 s), logged once per doubling of the attempt count; each
 * successful reconnect compares once, so nothing changed meanwhile is missed.
 */
export class CatalogChangeFeed extends ChangeDetector {
  readonly #options: ChangeFeedOptions;
  protected readonly hub: ChangeHub;
  readonly #backoff: Backoff;
  readonly #unreachable: CondensedWarning;
  /** Bumped by every start and stop: callbacks of an earlier run see they are stale. */
  #run = 0;
  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #client: pg.Client | undefined;
  #checking = false;
  #again = false;
  #usePolling: boolean;
  #installed = false;

  constructor(options: ChangeFeedOptions) {
    super();
    this.#options = options;
    this.#usePolling = options.mode === 'poll';
    this.#backoff = options.backoff ?? new Backoff();
    this.#unreachable = new CondensedWarning(
      options.logger,
      'postgres change feed cannot reach the database; retrying',
    );
    this.hub = new ChangeHub({
      sourceId: options.sourceId,
      logger: options.logger,
      uris: options.uris,
      start: () => this.#begin(),
      stop: () => void this.stop(),
    });
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#run += 1;
    this.hub.resetBaseline();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await client.end().catch(() => undefined);
    await this.settled();
  }

  #begin(): void {
    this.#running = true;
    this.#run += 1;
    this.#backoff.reset();
    this.#attempt(this.#run);
  }

  #current(run: number): boolean {
    return this.#running && this.#run === run;
  }

  /**
   * One attempt to be listening with a baseline: LISTEN (event-trigger mode)
   * before reading the fingerprint, so DDL committed between the two is both
   * notified and compared, never missed. After a lost connection the
   * baseline is kept and the comparison reports what changed meanwhile.
   */
  #attempt(run: number): void {
    const work = (async () => {
      if (!this.#usePolling) await this.#listen(run);
      if (!this.#current(run)) return;
      const fingerprint = await this.#options.fingerprint();
      if (!this.#current(run)) return;
      this.#compared(run, fingerprint);
    })().catch((error: unknown) => {
      if (!this.#current(run)) return;
      this.#retryLater(run, error, () => this.#attempt(run));
    });
    void this.hub.track(work);
  }

  /** A fingerprint read in `run`: compared, the database counts as reachable again, the next poll is scheduled. */
  #compared(run: number, fingerprint: CatalogFingerprint): void {
    this.hub.compare(fingerprint);
    this.#backoff.reset();
    this.#unreachable.recovered();
    if (this.#usePolling) this.#schedulePoll(run, this.#options.pollIntervalMs);
  }

  /** Logs (condensed) and schedules `again` after the next backoff delay. */
  #retryLater(run: number, error: unknown, again: () => void, atLeastMs = 0): void {
    const delay = Math.max(atLeastMs, this.#backoff.next());
    this.#unreachable.failed({ err: errorSummary(error) }, delay);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#current(run)) again();
    }, delay);
    this.#timer.unref();
  }

  async #listen(run: number): Promise<void> {
    if (!this.#installed) {
      try {
        await this.#options.install();
        this.#installed = true;
      } catch (error) {
        // Only a refusal by the server (an SQLSTATE, e.g. 42501 without
        // superuser) means polling; an unreachable server is retried, or a
        // database down at start would never get its event trigger.
        if (sqlState(error) === undefined) throw error;
        this.#options.logger.warn(
          { err: errorSummary(error) },
          'postgres event trigger could not be installed (needs superuser); polling the catalog instead',
        );
        this.#usePolling = true;
        return;
      }
    }
    const client = this.#options.newClient();
    // Heard only once the client is this.#client, i.e. listening: a failed
    // connect is the attempt's failure, not also a lost connection.
    client.on('error', (error) => this.#lost(run, client, error));
    client.on('end', () => this.#lost(run, client, new Error('connection ended')));
    client.on('notification', () => this.#requestCheck(run, NOTIFY_DEBOUNCE_MS));
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.#options.channel)}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.#current(run)) this.#client = client;
    else await client.end().catch(() => undefined);
  }

  #lost(run: number, client: pg.Client, error: unknown): void {
    if (this.#client !== client || !this.#current(run)) return;
    this.#client = undefined;
    void client.end().catch(() => undefined);
    this.#retryLater(run, error, () => this.#attempt(run));
  }

  #schedulePoll(run: number, delayMs: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#current(run)) this.#requestCheck(run, 0);
    }, delayMs);
    this.#timer.unref();
  }

  #requestCheck(run: number, delayMs: number): void {
    if (!this.#current(run)) return;
    if (this.#checking) {
      this.#again = true;
      return;
    }
    this.#checking = true;
    const work = new Promise<void>((resolve) => setTimeout(resolve, delayMs))
      .then(() => this.#check(run))
      .finally(() => {
        this.#checking = false;
        if (this.#again) {
          this.#again = false;
          this.#requestCheck(run, 0);
        }
      });
    void this.hub.track(work);
  }

  async #check(run: number): Promise<void> {
    if (!this.#current(run) || !this.hub.hasBaseline) return;
    try {
      const next = await this.#options.fingerprint();
      if (!this.#current(run)) return;
      this.#compared(run, next);
    } catch (error) {
      if (!this.#current(run)) return;
      // The baseline is kept so the eventual comparison still covers
      // everything that changed. Polling backs off like a reconnect; with
      // the trigger, the next notification (or reconnect) tries again.
      if (this.#usePolling)
        this.#retryLater(run, error, () => this.#requestCheck(run, 0), this.#options.pollIntervalMs);
      else this.#unreachable.failed({ err: errorSummary(error) });
    }
  }
}
