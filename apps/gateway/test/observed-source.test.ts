import { describe, expect, it } from 'vitest';
import type { Source } from '@mcpgw/core';
import { DEFAULT_SOURCE_TTL_MS } from '@mcpgw/core';
import { createGatewayMetrics } from '../src/observability/gateway-metrics.js';
import { observeSource } from '../src/observability/observed-source.js';
import { parseExposition } from '@mcpgw/test-helpers/prometheus-text';

// A backend that fails must show in mcpgw_backend_errors_total and still in the latency
// histogram (a timeout is a slow call), by source type; what it throws reaches the caller
// unchanged, and the wrapper keeps the optional parts of the Source interface.

function brokenSource(): Source {
  return {
    id: 'ledger',
    kind: 'postgres',
    ttlMs: DEFAULT_SOURCE_TTL_MS,
    listResources: async () => ({ items: [] }),
    listTemplates: async () => [],
    owns: (uri) => uri.startsWith('pg://'),
    read: async () => {
      throw new Error('statement timeout');
    },
    watch: () => () => undefined,
    settled: async () => undefined,
    health: async () => ({ ok: false }),
    close: async () => undefined,
  };
}

describe('observeSource', () => {
  it('counts failed backend calls by source type, and passes the error on', async () => {
    const metrics = createGatewayMetrics();
    const source = observeSource(brokenSource(), metrics, undefined);
    await source.listResources({ limit: 10 });
    await expect(source.read('pg://ledger/1')).rejects.toThrow('statement timeout');
    const scraped = parseExposition(await metrics.registry.metrics());
    expect(scraped.value('mcpgw_backend_errors_total', { source_type: 'postgres' })).toBe(1);
    expect(scraped.value('mcpgw_backend_duration_seconds_count', { source_type: 'postgres' })).toBe(2);
    expect(source.owns('pg://ledger/1')).toBe(true);
    expect(source.watch).toBeTypeOf('function');
    expect(source.settled).toBeTypeOf('function');
  });
});
