import type { FastifyBaseLogger } from 'fastify';
import type { TenantTraffic } from '@mcpgw/cache';
import { LATENCY_BUCKETS_MS, latencyQuantileMs } from '@mcpgw/cache';
import type { TrafficMinuteView } from '@mcpgw/admin';
import { errorSummary } from '@mcpgw/core';

/**
 * The tenant's last hour for the overview's charts; undefined (no charts,
 * the page still answers) when the counters cannot be read.
 */
export async function trafficOf(
  traffic: TenantTraffic,
  tenantId: string,
  log: FastifyBaseLogger,
): Promise<TrafficMinuteView[] | undefined> {
  try {
    const hour = await traffic.lastHour(tenantId);
    return hour.map((minute) => ({
      at: minute.at,
      requests: minute.requests,
      errors: minute.errors,
      cacheHits: minute.cacheHits,
      cacheMisses: minute.cacheMisses,
      // Slower than the last bucket: shown as that bound, the most the histogram can say.
      p95Ms:
        latencyQuantileMs(minute, 0.95) ??
        (minute.requests === 0 ? undefined : LATENCY_BUCKETS_MS[LATENCY_BUCKETS_MS.length - 1]),
      meanMs: minute.requests === 0 ? undefined : Math.round(minute.latencyMsSum / minute.requests),
    }));
  } catch (error) {
    log.warn({ err: errorSummary(error) }, 'the tenant traffic counters could not be read');
    return undefined;
  }
}
