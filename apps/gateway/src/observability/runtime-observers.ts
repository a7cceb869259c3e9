import type { RuntimeObservers } from '@mcpgw/tenancy';
import type { GatewayMetrics } from './gateway-metrics.js';
import { observeSource } from './observed-source.js';
import type { RequestTracing } from './request-tracing.js';

/** The hooks a tenant runtime is built with: metrics always, spans when tracing is on. */
export function createRuntimeObservers(metrics: GatewayMetrics, tracing: RequestTracing | undefined): RuntimeObservers {
  return {
    source: (source) => observeSource(source, metrics, tracing),
    authenticator(auth) {
      if (tracing === undefined) return auth;
      const authenticate: typeof auth.authenticate = (request, signal) =>
        tracing.traceAuthentication(
          () => auth.authenticate(request, signal),
          (outcome) => (outcome.ok ? 'ok' : outcome.reason),
        );
      // Prototype delegation: everything else (metadata, close) is the authenticator's own.
      return Object.create(auth, { authenticate: { value: authenticate } }) as typeof auth;
    },
    verifier: {
      jwksFetched: (outcome) => metrics.jwksFetched(outcome),
      introspected: (outcome) => metrics.introspected(outcome),
    },
  };
}
