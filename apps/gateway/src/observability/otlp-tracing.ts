import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { EnvConfig } from '@mcpgw/config';

/** A tracer provider and how to flush it at shutdown. */
export interface OtlpTracing {
  provider: BasicTracerProvider;
  /** Exports what is buffered and stops; call once, at shutdown. */
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK exporting over OTLP/HTTP (JSON encoding) to
 * `${OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`, as the OTLP exporter
 * specification builds a signal's URL from the base endpoint. Off (undefined)
 * when the endpoint is unset, and then the SDK and exporter are not even
 * loaded (they add to every start otherwise). Spans are batched, so exporting
 * never waits on a request; the default sampler follows the parent's sampled
 * flag (W3C Trace Context §3.2.2.5) and samples every root. No global
 * provider is registered: the app is handed this one.
 */
export async function startOtlpTracing(env: EnvConfig): Promise<OtlpTracing | undefined> {
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined) return undefined;
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] =
    await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
    ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${env.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` })),
    ],
  });
  return { provider, shutdown: () => provider.shutdown() };
}
