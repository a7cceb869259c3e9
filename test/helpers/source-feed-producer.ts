import type { FastifyInstance } from 'fastify';

/**
 * A minimal producer for tests: publishes the change feeds of one tenant's
 * serving sources (`Source.watch`) on the app's event bus, as the gateway's
 * own producers do. It follows the runtime serving when called, no swap.
 * Returns the function that stops it.
 */
export function publishSourceChanges(app: FastifyInstance, tenantId: string): () => void {
  const runtime = app.tenants.serving.get(tenantId);
  if (runtime === undefined) throw new Error(`tenant ${tenantId} is not served`);
  const stops = runtime.catalog.sources.map(
    (source) =>
      source.watch?.((change) => app.events.publish({ type: 'source', tenantId, sourceId: source.id, change })) ??
      (() => undefined),
  );
  return () => stops.forEach((stop) => stop());
}
