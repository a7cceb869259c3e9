import type { Logger } from '@mcpgw/core';
import type { RedisConnection } from './redis-connection.js';

/**
 * Which callers read or listed which resources of a tenant lately, for the
 * console's access activity page. One entry per (caller, action, resource),
 * with the last time it happened. It keeps the caller's tenant fingerprint,
 * its client id and, only when the tenant's grants match on subjects, its
 * subject: never a token nor any other claim (docs/security.md, "Access
 * activity").
 *
 * With Redis, a sorted set per tenant scored by the time (every replica adds
 * to it); otherwise in process. Both are bounded: entries older than the
 * retention are dropped, and beyond `maxEntries` the oldest go. Recording
 * is fire and forget: a failure is logged, never thrown into the request.
 */
export interface AccessActivity {
  record(tenantId: string, entry: AccessEntry): void;
  /** The tenant's entries within the retention, newest first. */
  list(tenantId: string): Promise<AccessRecord[]>;
  /** Drops a tenant's record (a deleted tenant). */
  forget(tenantId: string): Promise<void>;
  /** Sends what is not sent yet and stops the send timer. */
  close(): Promise<void>;
}

export interface AccessEntry {
  /** The caller's fingerprint within the tenant (the one a preview shows). */
  readonly principal: string;
  readonly clientId?: string | undefined;
  /** Kept only when the tenant's grants match on subjects. */
  readonly subject?: string | undefined;
  readonly action: 'read' | 'list';
  /** The URI read; for a listing, undefined. */
  readonly resource?: string | undefined;
  /** The grants the caller matched (names, from the tenant's own configuration). */
  readonly grants: readonly string[];
}

export interface AccessRecord extends AccessEntry {
  /** When it last happened, milliseconds since the epoch. */
  readonly at: number;
}

export interface AccessActivityOptions {
  readonly redis?: RedisConnection | undefined;
  /** Key prefix, e.g. `mcpgw:access:`; tests use their own namespace. */
  readonly prefix?: string;
  /**
   * The tenant as its Redis keys name it: the cache's keyed tenant tag
   * (CacheKeys.tenantTag), so no key names a tenant in the clear, as no
   * cache key does. Default: the tenant id (tests).
   */
  readonly tenantTag?: (tenantId: string) => string;
  readonly retentionMs: number;
  /** Entries kept per tenant at most. */
  readonly maxEntries: number;
  readonly now?: () => number;
  readonly logger?: Logger;
}

/**
 * With Redis, records are sent at most this often: one pipeline per tenant
 * instead of four commands per request, and a caller's repeats within it
 * are one entry. Other replicas' pages see a record this much later.
 */
const SEND_INTERVAL_MS = 1000;

/** A URI longer than this is cut: the record is for people to read, not a copy of every request. */
const MAX_URI_LENGTH = 512;

function memberOf(entry: AccessEntry): string {
  return JSON.stringify([
    entry.principal,
    entry.clientId ?? null,
    entry.subject ?? null,
    entry.action,
    entry.resource?.slice(0, MAX_URI_LENGTH) ?? null,
    [...entry.grants].sort(),
  ]);
}

function entryOf(member: string, at: number): AccessRecord | undefined {
  try {
    const [principal, clientId, subject, action, resource, grants] = JSON.parse(member) as [
      string,
      string | null,
      string | null,
      'read' | 'list',
      string | null,
      string[],
    ];
    return {
      principal,
      action,
      grants,
      at,
      ...(clientId === null ? {} : { clientId }),
      ...(subject === null ? {} : { subject }),
      ...(resource === null ? {} : { resource }),
    };
  } catch {
    return undefined;
  }
}

export function createAccessActivity(options: AccessActivityOptions): AccessActivity {
  const now = options.now ?? Date.now;
  const prefix = options.prefix ?? 'mcpgw:access:';
  const { redis, retentionMs, maxEntries } = options;
  const local = new Map<string, Map<string, number>>();
  const tenantTag = options.tenantTag ?? ((tenantId: string) => tenantId);
  const keyOf = (tenantId: string) => `${prefix}{${tenantTag(tenantId)}}`;

  // Insertion order is recency order (a repeat is moved to the end): the first are the oldest,
  // so trimming stops at the first entry that is both recent and within the cap.
  const trimLocal = (entries: Map<string, number>, at: number) => {
    for (const [member, seen] of entries) {
      if (seen > at - retentionMs && entries.size <= maxEntries) break;
      entries.delete(member);
    }
  };

  // Redis: what is not sent yet, per tenant, member → last seen (insertion order = recency).
  const pending = new Map<string, Map<string, number>>();
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> = Promise.resolve();

  const send = (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (redis === undefined || pending.size === 0) return sending;
    const batch = [...pending];
    pending.clear();
    const at = now();
    // One pipeline per tenant: a tenant's key is its own Redis Cluster hash slot.
    const sent = batch.map(([tenantId, members]) => {
      const key = keyOf(tenantId);
      const pipeline = redis.client.pipeline();
      for (const [member, seen] of members) pipeline.zadd(key, seen, member);
      return pipeline
        .zremrangebyscore(key, '-inf', at - retentionMs)
        .zremrangebyrank(key, 0, -(maxEntries + 1))
        .pexpire(key, retentionMs)
        .exec()
        .then((results) => {
          const failed = (results ?? []).find(([error]) => error !== null);
          if (failed !== undefined) throw failed[0];
        })
        .catch((error: unknown) =>
          options.logger?.warn({ err: String(error) }, 'access records were not written to Redis'),
        );
    });
    sending = Promise.all([sending, ...sent]).then(() => undefined);
    return sending;
  };

  return {
    record(tenantId, entry) {
      const at = now();
      const member = memberOf(entry);
      const held = redis === undefined ? local : pending;
      let entries = held.get(tenantId);
      if (entries === undefined) {
        entries = new Map();
        held.set(tenantId, entries);
      }
      entries.delete(member);
      entries.set(member, at);
      trimLocal(entries, at);
      if (redis !== undefined && timer === undefined) timer = setTimeout(() => void send(), SEND_INTERVAL_MS).unref();
    },
    async list(tenantId) {
      const at = now();
      const since = at - retentionMs;
      if (redis === undefined) {
        const entries = local.get(tenantId);
        if (entries === undefined) return [];
        trimLocal(entries, at);
        return [...entries].reverse().flatMap(([member, seen]) => (seen > since ? (entryOf(member, seen) ?? []) : []));
      }
      // This replica's own records first, so a page shows what was just done here.
      await send();
      const found = await redis.client.zrevrangebyscore(keyOf(tenantId), '+inf', `(${since}`, 'WITHSCORES');
      const records: AccessRecord[] = [];
      for (let index = 0; index + 1 < found.length; index += 2) {
        const record = entryOf(found[index]!, Number(found[index + 1]));
        if (record !== undefined) records.push(record);
      }
      return records;
    },
    async forget(tenantId) {
      local.delete(tenantId);
      pending.delete(tenantId);
      if (redis !== undefined) await redis.client.unlink(keyOf(tenantId));
    },
    close: () => send(),
  };
}
