import type { Source } from '@mcpgw/core';
import type { GatewayMetrics } from './gateway-metrics.js';
import type { RequestTracing } from './request-tracing.js';

/**
 * A source whose backend calls (listing resources and templates, reading)
 * are timed into `mcpgw_backend_duration_seconds` and counted in
 * `mcpgw_backend_errors_total` by source type, and traced as child spans of
 * the request that made them. It sits under the catalog cache, so only calls
 * that reach the backend count. Span attributes name the source, never a URI.
 */
export function observeSource(source: Source, metrics: GatewayMetrics, tracing: RequestTracing | undefined): Source {
  const sourceType = source.kind;
  const attributes = { 'mcpgw.source': source.id, 'mcpgw.source_type': sourceType };
  const call = <T>(operation: string, run: () => Promise<T>): Promise<T> => {
    const timed = async () => {
      const started = performance.now();
      try {
        const result = await run();
        metrics.backendCall(sourceType, (performance.now() - started) / 1000, false);
        return result;
      } catch (error) {
        metrics.backendCall(sourceType, (performance.now() - started) / 1000, true);
        throw error;
      }
    };
    return tracing === undefined
      ? timed()
      : tracing.inSpan(`backend ${operation}`, { ...attributes, 'mcpgw.backend.operation': operation }, timed);
  };
  const observed: Source = {
    id: source.id,
    kind: source.kind,
    ttlMs: source.ttlMs,
    listResources: (page, signal) => call('listResources', () => source.listResources(page, signal)),
    listTemplates: (signal) => call('listTemplates', () => source.listTemplates(signal)),
    owns: (uri) => source.owns(uri),
    read: (uri, signal, visible, caller) => call('read', () => source.read(uri, signal, visible, caller)),
    health: (signal) => source.health(signal),
    close: () => source.close(),
  };
  if (source.watch !== undefined) observed.watch = (listener) => source.watch!(listener);
  if (source.settled !== undefined) observed.settled = () => source.settled!();
  // The caches above key this source's answers by it: dropping it here would share them across identities.
  if (source.backendIdentity !== undefined) observed.backendIdentity = (caller) => source.backendIdentity!(caller);
  return observed;
}
