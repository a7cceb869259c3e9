import type { AdapterPayload } from 'oidc-provider';
import {
  checkRecord,
  GRANT_MEMBER_MODELS,
  systemClock,
  withoutConsumed,
  type Clock,
  type RecordStore,
} from './records.js';

/**
 * The commands used, as both an ioredis `Redis` and a `Cluster` offer them:
 * the gateway's one command connection is passed in, never a new one.
 */
export interface RedisCommands {
  eval(script: string, numkeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  get(key: string): Promise<string | null>;
  smembers(key: string): Promise<string[]>;
  srem(key: string, ...members: string[]): Promise<number>;
  del(...keys: string[]): Promise<number>;
  scan(cursor: string, match: 'MATCH', pattern: string, count: 'COUNT', n: number): Promise<[string, string[]]>;
}

export interface RedisRecordStoreOptions {
  readonly redis: RedisCommands;
  /** The deployment's key prefix (as the cache and the replica bus use it). Default `mcpgw`. */
  readonly namespace?: string;
  /**
   * How a key names the tenant: the gateway's keyed tenant tag (an HMAC of
   * the id, as every other Redis key of the gateway has it), so Redis never
   * holds a tenant id in the clear. Its value is also the key's Redis Cluster
   * hash tag: one tenant's records share one slot.
   */
  readonly tenantTag: (tenantId: string) => string;
  /**
   * The nodes to SCAN for {@link RecordStore.forgetTenant}: each master of a
   * cluster (`RedisConnection.masters()`); default `redis` itself (one server).
   */
  readonly masters?: () => Pick<RedisCommands, 'scan'>[];
  /** Only for the `consumed` time a record reports: lifetimes are Redis's own key TTLs. */
  readonly now?: Clock;
}

// Every key of a tenant carries the tenant in one hash tag, so on Redis
// Cluster the scripts below, which touch a record and its indexes together,
// run on one slot.

/**
 * Replaces a record and sets its indexes, all expiring with it. A consumed
 * record stays consumed (the field survives the replacement). KEYS[1] the
 * record, KEYS[2..] index keys set to ARGV[5]; when ARGV[4] (a grant member)
 * is not empty the last key is the grant's set, whose lifetime grows to its
 * longest-lived member's.
 */
const UPSERT = `
local consumed = redis.call('HGET', KEYS[1], 'consumed')
if not consumed and ARGV[3] ~= '' then consumed = ARGV[3] end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'payload', ARGV[1])
if consumed then redis.call('HSET', KEYS[1], 'consumed', consumed) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
local last = #KEYS
if ARGV[4] ~= '' then
  redis.call('SADD', KEYS[last], ARGV[4])
  if redis.call('TTL', KEYS[last]) < tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[last], ARGV[2]) end
  last = last - 1
end
for i = 2, last do redis.call('SET', KEYS[i], ARGV[5], 'EX', ARGV[2]) end
return 1`;

/** Marks KEYS[1] consumed at ARGV[1]: 1 for the one call that found it present and unconsumed. */
const CONSUME = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSETNX', KEYS[1], 'consumed', ARGV[1])`;

/**
 * Deletes KEYS[1] and those of KEYS[2..] that still point to ARGV[1] (a
 * session saved again under a new id keeps its uid: the index then belongs
 * to the new one).
 */
const DESTROY = `
redis.call('DEL', KEYS[1])
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('DEL', KEYS[i]) end
end
return 1`;

/** Stores KEYS[1] with ARGV[1] for ARGV[2] seconds unless it exists: 1 for the one call that stored it. */
const INSERT_IF_ABSENT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'payload', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1`;

/** Deletes KEYS[1] and returns its payload, once. */
const TAKE = `
local payload = redis.call('HGET', KEYS[1], 'payload')
redis.call('DEL', KEYS[1])
return payload`;

/**
 * oidc-provider's short-lived records in Redis: a hash per record (`payload`,
 * and `consumed` once consumed) whose key TTL is the record's lifetime, a
 * string per uid / user code index and a set per grant. Single use is HSETNX
 * in a script: Redis runs it whole, so of two replicas consuming one code
 * exactly one sees it unconsumed.
 */
export function createRedisRecordStore(options: RedisRecordStoreOptions): RecordStore {
  const { redis } = options;
  const namespace = options.namespace ?? 'mcpgw';
  const now = options.now ?? systemClock;
  const prefix = (tenantId: string) => `${namespace}:as:{${options.tenantTag(tenantId)}}:`;
  const recordKey = (tenantId: string, model: string, id: string) => `${prefix(tenantId)}r:${model}:${id}`;
  const uidKey = (tenantId: string, model: string, uid: string) => `${prefix(tenantId)}uid:${model}:${uid}`;
  const userCodeKey = (tenantId: string, model: string, code: string) => `${prefix(tenantId)}uc:${model}:${code}`;
  const grantKey = (tenantId: string, grantId: string) => `${prefix(tenantId)}g:${grantId}`;

  const indexKeys = (tenantId: string, model: string, payload: AdapterPayload): string[] => [
    ...(typeof payload.uid === 'string' ? [uidKey(tenantId, model, payload.uid)] : []),
    ...(typeof payload.userCode === 'string' ? [userCodeKey(tenantId, model, payload.userCode)] : []),
  ];

  const find = async (tenantId: string, model: string, id: string): Promise<AdapterPayload | undefined> => {
    const [payload, consumed] = await redis.hmget(recordKey(tenantId, model, id), 'payload', 'consumed');
    if (payload === null || payload === undefined) return undefined;
    const parsed = JSON.parse(payload) as AdapterPayload;
    return consumed === null || consumed === undefined ? parsed : { ...parsed, consumed: Number(consumed) };
  };
  const findByIndex = async (tenantId: string, model: string, key: string) => {
    const id = await redis.get(key);
    return id === null ? undefined : find(tenantId, model, id);
  };
  const destroy = async (tenantId: string, model: string, id: string) => {
    const key = recordKey(tenantId, model, id);
    const stored = await find(tenantId, model, id);
    const indexes = stored === undefined ? [] : indexKeys(tenantId, model, stored);
    await redis.eval(DESTROY, 1 + indexes.length, key, ...indexes, id);
    if (stored !== undefined && GRANT_MEMBER_MODELS.has(model) && typeof stored.grantId === 'string') {
      await redis.srem(grantKey(tenantId, stored.grantId), `${model}:${id}`);
    }
  };

  return {
    backend: 'redis',
    async upsert(tenantId, model, id, payload, expiresInSeconds) {
      checkRecord(tenantId, model, id, expiresInSeconds);
      if (expiresInSeconds === undefined) {
        throw new TypeError(`the Redis store keeps only records that expire; ${model} came without a lifetime`);
      }
      const { stored, consumed } = withoutConsumed(payload);
      const member = GRANT_MEMBER_MODELS.has(model) && typeof payload.grantId === 'string' ? `${model}:${id}` : '';
      const keys = [
        recordKey(tenantId, model, id),
        ...indexKeys(tenantId, model, payload),
        ...(member === '' ? [] : [grantKey(tenantId, payload.grantId as string)]),
      ];
      await redis.eval(
        UPSERT,
        keys.length,
        ...keys,
        JSON.stringify(stored),
        Math.ceil(expiresInSeconds),
        consumed === undefined ? '' : String(consumed),
        member,
        id,
      );
    },
    async insertIfAbsent(tenantId, model, id, payload, expiresInSeconds) {
      checkRecord(tenantId, model, id, expiresInSeconds);
      const stored = await redis.eval(
        INSERT_IF_ABSENT,
        1,
        recordKey(tenantId, model, id),
        JSON.stringify(payload),
        Math.ceil(expiresInSeconds),
      );
      return stored === 1;
    },
    find,
    findByUid: (tenantId, model, uid) => findByIndex(tenantId, model, uidKey(tenantId, model, uid)),
    findByUserCode: (tenantId, model, code) => findByIndex(tenantId, model, userCodeKey(tenantId, model, code)),
    async consume(tenantId, model, id) {
      const consumed = Math.floor(now() / 1000);
      return (await redis.eval(CONSUME, 1, recordKey(tenantId, model, id), consumed)) === 1;
    },
    destroy,
    async take(tenantId, model, id) {
      const payload = await redis.eval(TAKE, 1, recordKey(tenantId, model, id));
      return typeof payload === 'string' ? (JSON.parse(payload) as AdapterPayload) : undefined;
    },
    async revokeByGrantId(tenantId, grantId) {
      const key = grantKey(tenantId, grantId);
      const members = await redis.smembers(key);
      for (const member of members) {
        const colon = member.indexOf(':');
        await destroy(tenantId, member.slice(0, colon), member.slice(colon + 1));
      }
      if (members.length > 0) await redis.srem(key, ...members);
    },
    async forgetTenant(tenantId) {
      // Glob characters escaped: tenant ids are [a-z0-9-], but the pattern must never match wider.
      const pattern = `${prefix(tenantId).replace(/[*?[\]\\]/g, '\\$&')}*`;
      for (const node of options.masters?.() ?? [redis]) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
          // All in the tenant's hash tag, so one slot: one DEL may take them together.
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      }
    },
  };
}
