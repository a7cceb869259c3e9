import { AsyncLocalStorage } from 'node:async_hooks';
import type { Attributes, Context, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, createTraceState, trace } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MCP_ROUTE } from '../mcp-route.js';
import { methodLabel, outcomeLabel } from '../plugins/metrics.js';

/** What one MCP request's trace holds while it runs. */
interface RequestTrace {
  /** Arrival, in ms since the epoch (sub-millisecond). */
  readonly startTime: number;
  /** The authentication step, timed before the request's span exists (it needs the body's `_meta`). */
  auth?: { startTime: number; endTime: number; outcome: string };
  span?: Span;
  /** The context child spans start in. */
  context?: Context;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpTrace: RequestTrace | null;
  }
}

/**
 * Spans for MCP requests: one SERVER span per request (tenant and method),
 * with children for authentication, each cache lookup and each backend call.
 * Off unless the app is given a tracer provider.
 */
export interface RequestTracing {
  /** Installs the hooks that open and close each MCP request's span. */
  install(app: FastifyInstance, options: { isServedTenant: (id: string) => boolean }): void;
  /** Times an authentication; `outcome` names how it went (`ok` or the refusal reason). */
  traceAuthentication<T>(run: () => Promise<T>, outcome: (result: T) => string): Promise<T>;
  /** Runs `run` in a child span of the current request's span (or of the enclosing child); untraced outside a request. */
  inSpan<T>(
    name: string,
    attributes: Attributes,
    run: () => Promise<T>,
    describe?: (result: T) => Attributes,
  ): Promise<T>;
}

const now = () => performance.timeOrigin + performance.now();

/**
 * W3C Trace Context §3.2 `traceparent`: `version-traceid-parentid-flags`,
 * lowercase hex; all-zero ids are invalid, version `ff` is invalid, and a
 * later version may append fields after the four this parser reads (§4.3).
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The remote parent a `traceparent` (and `tracestate`) names, or undefined when malformed. */
export function parentContext(traceparent: unknown, tracestate: unknown): Context | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & 1,
    isRemote: true,
    ...(typeof tracestate === 'string' && tracestate !== '' ? { traceState: createTraceState(tracestate) } : {}),
  });
}

/**
 * The parent of a request's span: the HTTP `traceparent` header (W3C Trace
 * Context §3.2) when valid, else the `traceparent` of the message's
 * `params._meta` (2026-07-28 basic, "`_meta`": the keys `traceparent`,
 * `tracestate` and `baggage` are reserved for OpenTelemetry trace context).
 * The header wins because it names the nearest hop (a proxy's span is a
 * child of the client's).
 */
function requestParent(request: FastifyRequest): Context {
  const header = parentContext(request.headers.traceparent, request.headers.tracestate);
  if (header !== undefined) return header;
  const meta = (request.body as { params?: { _meta?: Record<string, unknown> } } | undefined)?.params?._meta;
  return parentContext(meta?.traceparent, meta?.tracestate) ?? ROOT_CONTEXT;
}

/** Creates request tracing over a tracer provider (the SDK's, with its exporter; or an in-memory one in tests). */
export function createRequestTracing(provider: TracerProvider): RequestTracing {
  const tracer: Tracer = provider.getTracer('@mcpgw/gateway');
  const current = new AsyncLocalStorage<RequestTrace>();

  const openSpan = (request: FastifyRequest, state: RequestTrace, tenant: string): void => {
    if (state.span !== undefined) return;
    const parent = requestParent(request);
    const span = tracer.startSpan(
      'mcp',
      {
        kind: SpanKind.SERVER,
        startTime: state.startTime,
        attributes: { 'mcpgw.tenant': tenant, 'http.request.method': request.method },
      },
      parent,
    );
    state.span = span;
    state.context = trace.setSpan(parent, span);
    if (state.auth !== undefined) {
      const auth = tracer.startSpan(
        'authenticate',
        { startTime: state.auth.startTime, attributes: { 'mcpgw.auth.outcome': state.auth.outcome } },
        state.context,
      );
      auth.end(state.auth.endTime);
    }
  };

  return {
    install(app, { isServedTenant }) {
      const tenantOf = (request: FastifyRequest) => {
        const id = (request.params as { tenant?: unknown }).tenant;
        return typeof id === 'string' && isServedTenant(id) ? id : 'unknown';
      };
      app.decorateRequest('mcpTrace', null);
      // Callback-style hooks, so that the rest of the request runs inside `current.run`.
      app.addHook('onRequest', (request, _reply, done) => {
        if (request.routeOptions.url !== MCP_ROUTE) return done();
        const state: RequestTrace = { startTime: now() };
        request.mcpTrace = state;
        current.run(state, done);
      });
      // Reading the body leaves the request's async context; enter it again, now with the span.
      app.addHook('preHandler', (request, _reply, done) => {
        const state = request.mcpTrace;
        if (state === null) return done();
        openSpan(request, state, tenantOf(request));
        current.run(state, done);
      });
      app.addHook('onResponse', async (request, reply) => {
        const state = request.mcpTrace;
        if (state === null) return;
        openSpan(request, state, tenantOf(request));
        const span = state.span as Span;
        const method = methodLabel(request);
        const outcome = outcomeLabel(request, reply.statusCode);
        span.updateName(method === 'other' ? 'mcp' : method);
        span.setAttributes({
          'mcp.method.name': method,
          'http.response.status_code': reply.statusCode,
          'mcpgw.outcome': outcome,
        });
        const rpcError = request.mcpLog?.rpcError;
        if (rpcError !== undefined) span.setAttribute('rpc.jsonrpc.error_code', rpcError);
        if (reply.statusCode >= 500 || rpcError === -32603) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
    },

    async traceAuthentication(run, outcome) {
      const state = current.getStore();
      const startTime = now();
      const result = await run();
      if (state !== undefined) state.auth = { startTime, endTime: now(), outcome: outcome(result) };
      return result;
    },

    inSpan(name, attributes, run, describe) {
      const state = current.getStore();
      if (state?.context === undefined) return run();
      const span = tracer.startSpan(name, { attributes }, state.context);
      const child: RequestTrace = { ...state, context: trace.setSpan(state.context, span) };
      return current.run(child, run).then(
        (result) => {
          if (describe !== undefined) span.setAttributes(describe(result));
          span.end();
          return result;
        },
        (error: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
          span.end();
          throw error;
        },
      );
    },
  };
}
