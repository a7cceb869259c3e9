import { createHmac } from 'node:crypto';

/**
 * Builds every Redis key and channel name the gateway uses: one helper puts
 * the tenant in every key, so no key can be built without it. Nothing in a key is readable:
 *
 *   {ns}:{<tag>}:e:<mac>    an entry (a cached MCP result or a backend page)
 *   {ns}:{<tag>}:e:<mac>:l  the single-flight lock of that entry
 *   {ns}:{<tag>}:b:<mac>    a result body, stored once for every entry whose body it is
 *   {ns}:{<tag>}:g          the tenant's generation (invalidation)
 *   {ns}:{<tag>}:r          the newest configuration revision any replica has seen
 *   {ns}:invalidate         the pub/sub channel announcing a new generation
 *
 * `<tag>` = HMAC(key, "tenant" | tenantId), 16 hex digits. Redis Cluster
 * hashes only the text between the first `{` and `}`, so all of a tenant's
 * keys live in one slot: MGET of an entry and its lock is legal, and a
 * tenant's load spreads by tenant across the cluster.
 *
 * `<mac>` = HMAC-SHA256(key, [layer, tenantId, generation, revision, who, method, params]),
 * where `who` is the principal fingerprint (per-credential results) or the
 * source id (the shared catalog layer). The MAC key is `ServerKeys.cacheKey`
 * (`@mcpgw/core`), derived from the server secret for this purpose alone, so
 * Redis contents reveal no principal, tenant or URI.
 * A body's `<mac>` = HMAC-SHA256(key, ["body", tenantId, text]): content
 * addressed within the tenant, so identical bodies are one key and no body is
 * ever reachable from another tenant's keys.
 *
 * Keys are pure functions of their inputs: the tenant tag and recent entry
 * keys are remembered rather than worked out again on every request.
 */
export interface CacheKeys {
  /** The tenant's hash tag, also the pub/sub message that invalidates it. */
  tenantTag(tenantId: string): string;
  entry(parts: EntryKeyParts): string;
  /** The MAC naming a result body with this exact text within the tenant. */
  bodyMac(tenantId: string, text: string): string;
  /** The key of the body `bodyMac` named. */
  body(tenantId: string, mac: string): string;
  lock(entryKey: string): string;
  generation(tenantId: string): string;
  /** The same key from the tenant's tag, as an invalidation announces it. */
  generationOfTag(tag: string): string;
  /** The tenant's revision floor: runtimes of a lower revision neither read nor write entries. */
  revisionFloor(tenantId: string): string;
  /** What every key of the tenant starts with (deleting a tenant deletes by it). */
  tenantPrefix(tenantId: string): string;
  readonly invalidationChannel: string;
}

export interface EntryKeyParts {
  /** `result`: a finished MCP result for one principal; `source`: a backend page shared by a tenant. */
  layer: 'result' | 'source';
  tenantId: string;
  generation: string;
  /**
   * The configuration revision of the runtime that computed the entry: a
   * runtime of another revision never reads or writes it, so an entry made
   * under grants that changed since is out of reach of the new ones.
   */
  revision: number;
  /** The principal fingerprint (`result`) or the source id (`source`). */
  who: string;
  /** e.g. `resources/list`, or `listResources` for a source call. */
  method: string;
  /** Whatever else shapes the result: cursor, uri, position and limit. */
  params: unknown;
}

export interface CacheKeysOptions {
  /** The MAC key: `ServerKeys.cacheKey` from `@mcpgw/core`. */
  key: Uint8Array;
  /** Prefix of every key and channel; tests use a fresh one per run. Default `mcpgw`. */
  namespace?: string;
}

/** How many tenant tags and entry keys are remembered. */
const MEMO_ENTRIES = 10_000;

export function createCacheKeys(options: CacheKeysOptions): CacheKeys {
  const key = options.key;
  const ns = options.namespace ?? 'mcpgw';
  const mac = (input: string) => createHmac('sha256', key).update(input).digest('base64url');
  const tags = new Map<string, string>();
  const tenantTag = (tenantId: string) => {
    let tag = tags.get(tenantId);
    if (tag === undefined) {
      tag = createHmac('sha256', key).update(`tenant\u0000${tenantId}`).digest('hex').slice(0, 16);
      if (tags.size >= MEMO_ENTRIES) tags.clear();
      tags.set(tenantId, tag);
    }
    return tag;
  };
  const entries = new Map<string, string>();

  return {
    tenantTag,
    entry(parts) {
      // JSON of an array is unambiguous: no choice of values makes two different tuples collide.
      const input = JSON.stringify([
        parts.layer,
        parts.tenantId,
        parts.generation,
        parts.revision,
        parts.who,
        parts.method,
        parts.params ?? null,
      ]);
      let entry = entries.get(input);
      if (entry === undefined) {
        entry = `${ns}:{${tenantTag(parts.tenantId)}}:e:${mac(input)}`;
        // A crude bound: the memo only saves work, so starting over costs nothing but time.
        if (entries.size >= MEMO_ENTRIES) entries.clear();
        entries.set(input, entry);
      }
      return entry;
    },
    bodyMac: (tenantId, text) => mac(JSON.stringify(['body', tenantId, text])),
    body: (tenantId, bodyMac) => `${ns}:{${tenantTag(tenantId)}}:b:${bodyMac}`,
    lock: (entryKey) => `${entryKey}:l`,
    generation: (tenantId) => `${ns}:{${tenantTag(tenantId)}}:g`,
    generationOfTag: (tag) => `${ns}:{${tag}}:g`,
    revisionFloor: (tenantId) => `${ns}:{${tenantTag(tenantId)}}:r`,
    tenantPrefix: (tenantId) => `${ns}:{${tenantTag(tenantId)}}:`,
    invalidationChannel: `${ns}:invalidate`,
  };
}
