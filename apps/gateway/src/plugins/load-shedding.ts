import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EnvConfig } from '@mcpgw/config';
import { GatewayError } from '@mcpgw/core';
import { MCP_ROUTE } from '../mcp-route.js';
import { startLoopStall } from './loop-stall.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Shed this route's requests while the event loop is late, as the MCP endpoint's (the admin API's routes). */
    loadShed?: boolean;
  }
}

/** Whether a request is one load shedding may refuse: the MCP endpoint's, or a route that asks to be shed. */
const sheddable = (request: FastifyRequest): boolean =>
  request.routeOptions.url === MCP_ROUTE || request.routeOptions.config.loadShed === true;

/** What a shed request is told to wait (RFC 9110 section 10.2.3): about one sampling period and then some. */
export const SHED_RETRY_AFTER_SECONDS = 2;

export interface LoadSheddingOptions {
  env: Pick<EnvConfig, 'SHED_EVENT_LOOP_DELAY_MS' | 'SHED_EVENT_LOOP_UTILIZATION' | 'SHED_EVENT_LOOP_STALL_MS'>;
  /** Called for each shed request (metrics). */
  onShed?: () => void;
}

/** How often @fastify/under-pressure samples the event loop (its own default). */
const SAMPLE_INTERVAL_MS = 1000;

export interface LoadShedding {
  /** Requests shed so far (a metrics module can read this). */
  readonly shed: number;
}

/**
 * Refuses new MCP requests with 503 and Retry-After while the event loop is
 * saturated, instead of queueing them without bound: once the loop is late,
 * every queued request adds to every other's latency, and p99 climbs past
 * any deadline. @fastify/under-pressure has every threshold off by default,
 * so they are set here from the environment.
 *
 * Only the MCP endpoint and the routes that set `config.loadShed` (the admin
 * API's) are shed. Health probes and metadata stay answered: a shed liveness
 * probe would get a busy replica restarted, adding to the load.
 */
export async function installLoadShedding(app: FastifyInstance, options: LoadSheddingOptions): Promise<LoadShedding> {
  const {
    SHED_EVENT_LOOP_DELAY_MS: maxDelay,
    SHED_EVENT_LOOP_UTILIZATION: maxUtilization,
    SHED_EVENT_LOOP_STALL_MS: maxStall,
  } = options.env;
  const state = { shed: 0 };
  const refuse = (reply: FastifyReply, reason: string): never => {
    state.shed += 1;
    options.onShed?.();
    reply.header('retry-after', String(SHED_RETRY_AFTER_SECONDS));
    // Thrown, so the error handler writes the JSON-RPC body and the hook chain stops here.
    throw new GatewayError('MCPGW_OVERLOADED', [reason, String(SHED_RETRY_AFTER_SECONDS)]);
  };
  if (maxStall > 0) {
    // Per request, before any other work on it (registered first, so it runs first).
    const stall = startLoopStall();
    app.addHook('onClose', async () => stall.stop());
    app.addHook('onRequest', async (request, reply) => {
      if (sheddable(request) && stall.now() > maxStall) refuse(reply, 'event loop stalled');
    });
  }
  if (maxDelay === 0 && maxUtilization === 0) return state;
  // The plugin samples from its registration, so its first samples after the app is ready still cover
  // the rest of the start (module loading, control-plane queries on an embedded database), which on a
  // loaded machine can hold the loop for seconds: an idle replica would refuse its first requests.
  // The first sample taken wholly after ready is the second one, at most two periods later.
  let readyAt = Number.POSITIVE_INFINITY;
  app.addHook('onReady', async () => {
    readyAt = performance.now();
  });
  const sampledSinceReady = (): boolean => performance.now() - readyAt >= 2 * SAMPLE_INTERVAL_MS;
  await app.register(underPressure, {
    // 0 leaves a threshold off in the plugin as well.
    maxEventLoopDelay: maxDelay,
    maxEventLoopUtilization: maxUtilization,
    sampleInterval: SAMPLE_INTERVAL_MS,
    retryAfter: SHED_RETRY_AFTER_SECONDS,
    pressureHandler: (request, reply, type) => {
      if (!sheddable(request) || !sampledSinceReady()) return undefined;
      return refuse(reply, type === 'eventLoopDelay' ? 'event loop delayed' : 'event loop saturated');
    },
  });
  return state;
}
