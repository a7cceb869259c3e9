import type { TracerProvider } from '@opentelemetry/api';
import fastifyPlugin from 'fastify-plugin';
import type { RequestTracing } from '../observability/request-tracing.js';
import { createRequestTracing } from '../observability/request-tracing.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Spans for MCP requests and what they call; null when the app has no tracer provider. */
    tracing: RequestTracing | null;
  }
}

export interface TracingOptions {
  /** Where request spans go (main.ts passes the OTLP exporter's provider when OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  tracerProvider?: TracerProvider | undefined;
}

/** Decorates `app.tracing`; the request hooks come with the request metrics (requestObservationPlugin). */
export const tracingPlugin = fastifyPlugin<TracingOptions>(
  async (app, { tracerProvider }) => {
    app.decorate('tracing', tracerProvider === undefined ? null : createRequestTracing(tracerProvider));
  },
  { name: 'mcpgw-tracing' },
);
