import { randomBytes } from 'node:crypto';
import type { ReplicaBus } from '@mcpgw/core';
import type { CacheKeys } from './cache-keys.js';
import type { CacheStore } from './cache-store.js';
import { CacheBypassError } from './circuit-breaker.js';

/** A generation outlives any entry; if Redis drops it, a new one just empties the tenant's cache once. */
const GENERATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface TenantGenerationsOptions {
  /** How often an announcement that could not be published is tried again. Default 1,000 ms. */
  retryMs?: number;
}

/**
 * A lookup by a runtime older than the newest configuration revision this
 * replica has seen (itself, or through Redis from another replica): served
 * uncached, and counted as a bypass.
 */
export class RevisionBehindError extends CacheBypassError {
  constructor(
    readonly revision: number,
    readonly newest: number,
  ) {
    super();
    this.message = `revision ${revision} is behind revision ${newest}`;
    this.name = 'RevisionBehindError';
  }
}

/** Told when Redis shows a tenant revision newer than the one a lookup was made under. */
export type NewerRevisionListener = (tenantId: string, revision: number) => void;

/**
 * Invalidation by key versioning: every entry key folds in the tenant's
 * current generation, a random string kept in the store. Replacing it makes
 * all of the tenant's entries unreachable at once (they expire on their
 * own). Each replica keeps a copy until the replica bus announces a new
 * generation (within about a millisecond on every replica) or until the bus
 * reports a gap (docs/adr/0012-one-bus-two-transports.md: a dropped or silent
 * connection, after which every copy is read again). An announcement that
 * could not be published is owed and published again until it goes out.
 *
 * A store of this replica's own (in process: several replicas without Redis)
 * holds generations no other replica reads, so there another replica's
 * announcement, or a gap, replaces the tenant's generation in this store
 * instead: its entries become unreachable here too.
 *
 * Entry keys also fold in the configuration revision of the runtime that
 * computed them, and the store keeps each tenant's revision floor: the
 * newest revision any replica has started to apply (raised atomically, never
 * lowered). A runtime whose revision is below the floor, here or in Redis,
 * neither reads nor writes entries: a replica still serving an old
 * configuration can neither hand out nor plant results made under grants
 * that have since been revoked, and the replica that reads the newer floor
 * is told (`onNewer`), so it applies the change even if its own change
 * signal was lost.
 */
export class TenantGenerations {
  private readonly local = new Map<string, string>();
  private readonly loading = new Map<string, Promise<string>>();
  /** The newest revision seen per tenant id: noted here, or read from the store. */
  private readonly floors = new Map<string, number>();
  private readonly newer = new Set<NewerRevisionListener>();
  /** Tenant tags whose announcement failed to publish, to publish again. */
  private readonly owed = new Set<string>();
  /** Tags whose generation this replica has read or written: what a gap replaces in a store of its own. */
  private readonly known = new Set<string>();
  private readonly retry: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private readonly stopGap: () => void;

  constructor(
    private readonly store: CacheStore,
    private readonly keys: CacheKeys,
    private readonly bus: ReplicaBus,
    options: TenantGenerationsOptions = {},
  ) {
    // This replica's own announcement is already applied here (its echo would only cost a re-read).
    this.unsubscribe = bus.subscribe(keys.invalidationChannel, (tag, own) => {
      if (!own) this.forget(tag);
    });
    // The one resync rule: after a gap every copy is read again (and a store of this replica's own starts over).
    this.stopGap = bus.onGap(() => {
      for (const tag of this.store.kind === 'memory' ? [...this.known] : [...this.local.keys()]) this.forget(tag);
      this.payOwed();
    });
    this.retry = setInterval(() => this.payOwed(), options.retryMs ?? 1000);
    this.retry.unref();
  }

  /**
   * The tenant's generation for a runtime of `revision`; rejects when the
   * store fails or a newer revision is known (the caller bypasses the cache).
   */
  async current(tenantId: string, revision: number): Promise<string> {
    this.checkFloor(tenantId, revision);
    const tag = this.keys.tenantTag(tenantId);
    const known = this.local.get(tag);
    if (known !== undefined) return known;
    let pending = this.loading.get(tag);
    if (pending === undefined) {
      pending = this.load(tenantId, tag).finally(() => this.loading.delete(tag));
      this.loading.set(tag, pending);
    }
    const generation = await pending;
    this.checkFloor(tenantId, revision);
    return generation;
  }

  /**
   * This replica starts applying `revision`: lookups of older runtimes bypass
   * the cache from now on, here at once and on every replica once it reads
   * the floor (the tag is published, so at once there too unless the message
   * is lost).
   */
  async noteRevision(tenantId: string, revision: number): Promise<void> {
    this.raiseFloor(tenantId, revision);
    const tag = this.keys.tenantTag(tenantId);
    this.local.delete(tag);
    await this.store.raise(this.keys.revisionFloor(tenantId), revision, GENERATION_TTL_MS);
    await this.announce(tag);
  }

  /** Starts a new generation for the tenant and tells every replica. */
  async invalidate(tenantId: string): Promise<void> {
    const tag = this.keys.tenantTag(tenantId);
    // Even if the store fails below, this replica must not keep serving the old generation.
    this.local.delete(tag);
    const generation = randomBytes(12).toString('base64url');
    await this.store.set(this.keys.generation(tenantId), generation, GENERATION_TTL_MS);
    this.local.set(tag, generation);
    this.known.add(tag);
    await this.announce(tag);
  }

  /**
   * The tenant is gone: every runtime of it this replica may still hold
   * (requests finishing on it) is refused from now on, and every key of the
   * tenant is deleted from the store. A tenant created again under the same
   * id starts at a higher revision (the control plane keeps counting), so it
   * is not refused. `revision`: the newest revision of the tenant this
   * replica had seen, if it knows.
   */
  async drop(tenantId: string, revision?: number): Promise<number> {
    this.raiseFloor(tenantId, Math.max(revision ?? 0, this.floors.get(tenantId) ?? 0) + 1);
    const tag = this.keys.tenantTag(tenantId);
    this.local.delete(tag);
    const deleted = await this.store.deleteByPrefix(this.keys.tenantPrefix(tenantId));
    await this.announce(tag).catch(() => undefined);
    return deleted;
  }

  /** Subscribes to revisions newer than a lookup's, as read from the store; returns an unsubscribe. */
  onNewer(listener: NewerRevisionListener): () => void {
    this.newer.add(listener);
    return () => void this.newer.delete(listener);
  }

  close(): void {
    clearInterval(this.retry);
    this.unsubscribe();
    this.stopGap();
    this.newer.clear();
    this.owed.clear();
  }

  /** Tells every replica to drop its copy of the tenant's generation; owed (and rejected) when it cannot be sent. */
  private async announce(tag: string): Promise<void> {
    try {
      await this.bus.publish(this.keys.invalidationChannel, tag);
      this.owed.delete(tag);
    } catch (error) {
      this.owed.add(tag);
      throw error;
    }
  }

  /** Another replica replaced the tenant's generation: read it again (from a shared store) or start one here. */
  private forget(tag: string): void {
    this.local.delete(tag);
    if (this.store.kind === 'memory') {
      this.known.delete(tag);
      void this.store.delete(this.keys.generationOfTag(tag)).catch(() => undefined);
    }
  }

  private payOwed(): void {
    for (const tag of [...this.owed]) void this.announce(tag).catch(() => undefined);
  }

  private checkFloor(tenantId: string, revision: number): void {
    const floor = this.floors.get(tenantId);
    if (floor !== undefined && revision < floor) throw new RevisionBehindError(revision, floor);
  }

  private raiseFloor(tenantId: string, revision: number): void {
    if (!((this.floors.get(tenantId) ?? Number.NEGATIVE_INFINITY) >= revision)) this.floors.set(tenantId, revision);
  }

  private async load(tenantId: string, tag: string): Promise<string> {
    const key = this.keys.generation(tenantId);
    const [stored, floorText] = await this.store.getMany([key, this.keys.revisionFloor(tenantId)]);
    const floor = Number(floorText);
    if (floorText !== undefined && Number.isSafeInteger(floor) && floor > (this.floors.get(tenantId) ?? 0)) {
      this.raiseFloor(tenantId, floor);
      for (const listener of [...this.newer]) listener(tenantId, floor);
    }
    let generation = stored;
    if (generation === undefined) {
      // First use (or the key was evicted): replicas race to create it, and all adopt the winner.
      const mine = randomBytes(12).toString('base64url');
      generation = (await this.store.setIfAbsent(key, mine, GENERATION_TTL_MS))
        ? mine
        : ((await this.store.get(key)) ?? mine);
    }
    this.local.set(tag, generation);
    this.known.add(tag);
    return generation;
  }
}
