import { randomBytes } from 'node:crypto';
import type { RedisConnection } from '@mcpgw/cache';
import type { Leases } from '@mcpgw/core';

export type { LeaseHandlers, Leases } from '@mcpgw/core';

/** One replica: every lease is held at once, by this process. */
export function createLocalLeases(): Leases {
  return {
    hold(_name, handlers) {
      handlers.acquired(false);
      return () => undefined;
    },
  };
}

export interface RedisLeasesOptions {
  readonly redis: RedisConnection;
  /** Prefix of the lease keys: `<prefix><name>`. */
  readonly prefix: string;
  /** How long a lease outlives its holder's last renewal. Default 5,000 ms; renewed every third of it. */
  readonly ttlMs?: number;
}

// Takes the lease when it is free, renews it when this token holds it, in one step (SET NX PX and
// PEXPIRE would race another replica's SET between them). 1: held by this token; 0: by another.
const HOLD_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder == false then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
`;
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Leases in Redis: a key per lease holding the holder's random token, set
 * when free and renewed while held (every third of `ttlMs`), so a holder that
 * stops (crashed, paused, partitioned) loses it once the key expires and a
 * contender takes it over at its next attempt. While Redis does not answer,
 * each replica acts as the holder for itself (as without Redis: its work
 * serves its own callers); the first answer decides again.
 */
export function createRedisLeases(options: RedisLeasesOptions): Leases {
  const ttlMs = options.ttlMs ?? 5000;
  const { client } = options.redis;
  return {
    hold(name, handlers) {
      const key = `${options.prefix}${name}`;
      const token = randomBytes(12).toString('base64url');
      let held = false;
      let sawOther = false;
      let released = false;
      const become = (next: boolean) => {
        if (released || next === held) return;
        held = next;
        if (next) handlers.acquired(sawOther);
        else {
          sawOther = true;
          handlers.lost();
        }
      };
      const attempt = () => {
        (client.eval(HOLD_SCRIPT, 1, key, token, String(ttlMs)) as Promise<number>).then(
          (result) => {
            if (result !== 1) sawOther = true;
            become(result === 1);
          },
          // Redis is away: detect for this replica's own callers until it answers.
          () => become(true),
        );
      };
      attempt();
      const timer = setInterval(attempt, Math.max(1, Math.floor(ttlMs / 3)));
      timer.unref();
      return () => {
        if (released) return;
        released = true;
        clearInterval(timer);
        if (held) void (client.eval(RELEASE_SCRIPT, 1, key, token) as Promise<unknown>).catch(() => undefined);
      };
    },
  };
}
