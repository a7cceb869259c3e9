import type { Logger } from '@mcpgw/core';
import { createLocalTenantEventBus } from './local-tenant-event-bus.js';
import { createRedisTenantEventBus } from './redis-tenant-event-bus.js';
import type { TenantEventBus } from './tenant-events.js';

export interface OpenTenantEventBusOptions {
  /** REDIS_URL; unset: the in-process bus (one replica). */
  readonly redisUrl: string | undefined;
  /** Channel prefix (see RedisTenantEventBusOptions.namespace). */
  readonly namespace?: string | undefined;
  readonly logger: Logger;
}

export interface OpenedTenantEventBus {
  readonly bus: TenantEventBus;
  /** For a Redis bus: resolves true once connected, false after `timeoutMs`. */
  readonly ready?: (timeoutMs: number) => Promise<boolean>;
}

/** The bus the configuration asks for: Redis pub/sub when REDIS_URL is set, else in-process. */
export function openTenantEventBus(options: OpenTenantEventBusOptions): OpenedTenantEventBus {
  if (options.redisUrl === undefined) return { bus: createLocalTenantEventBus(options.logger) };
  const bus = createRedisTenantEventBus({
    url: options.redisUrl,
    logger: options.logger,
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
  });
  return { bus, ready: (timeoutMs) => bus.ready(timeoutMs) };
}
