import type { FastifyInstance } from 'fastify';
import type { EnvConfig } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import type { ListenContext } from '../routes/listen-stream.js';
import type { TenantRuntime } from '@mcpgw/tenancy';
import { createListenStreams } from '@mcpgw/events';
import type { ListenStreams, TenantEventBus } from '@mcpgw/events';

declare module 'fastify' {
  interface FastifyInstance {
    /** The open `subscriptions/listen` streams of this replica: `count(tenantId?)`. */
    listenStreams: ListenStreams;
  }
}

/**
 * Sets up `subscriptions/listen` for the app: the stream registry with
 * the configured caps, and the shutdown order: every stream gets its
 * completion in `preClose`, before the server stops and waits on open
 * connections (2026-07-28 basic/patterns/subscriptions, "Graceful Closure").
 */
export function installListen(
  app: FastifyInstance,
  options: {
    env: EnvConfig;
    tenants: ReadonlyMap<string, TenantRuntime>;
    /** This replica's tenant events (`app.events`, which the app owns and closes). */
    bus: TenantEventBus;
    logger: Logger;
    opened: () => () => void;
    /** Counts an acknowledged listen request like a finished request (`mcpgw_requests_total`, latency to open). */
    acknowledged: ListenContext['acknowledged'];
  },
): ListenContext {
  const { env } = options;
  const { bus } = options;
  const streams = createListenStreams({
    limits: {
      perPrincipal: env.LISTEN_MAX_STREAMS_PER_PRINCIPAL,
      perTenant: env.LISTEN_MAX_STREAMS_PER_TENANT,
      total: env.LISTEN_MAX_STREAMS,
    },
    keepAliveMs: env.LISTEN_KEEPALIVE_MS,
    opened: options.opened,
  });
  app.decorate('listenStreams', streams);
  app.addHook('preClose', async () => streams.completeAll());
  return {
    streams,
    bus,
    tenants: options.tenants,
    listChangedIntervalMs: env.LISTEN_LIST_CHANGED_INTERVAL_MS,
    acknowledged: options.acknowledged,
  };
}
