import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { GatewayConfig } from '@mcpgw/config';
import { startOtlpTracing } from '@mcpgw/gateway/testing';
import type { LocalIssuer } from '../helpers/local-issuer.js';
import { startLocalIssuer } from '../helpers/local-issuer.js';
import { buildTestApp, type TestApp } from '../helpers/gateway.js';
import { MODERN_META } from '../helpers/mcp-http.js';

// A span per MCP request (tenant, method) with children for
// authentication, each cache lookup and each backend call, continuing a W3C traceparent from
// the HTTP header or from the message's _meta (2026-07-28 basic, "_meta": traceparent is
// reserved for OpenTelemetry trace context). Spans go to an in-memory exporter, then, through
// the OTLP/HTTP exporter main.ts uses, to a collector on 127.0.0.1.

const HOST = '127.0.0.1:8080';
const RESOURCE = `http://${HOST}/t/acme/mcp`;
const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';

let issuer: LocalIssuer;
let config: GatewayConfig;
let app: FastifyInstance;
let gateway: TestApp;
let token: string;
/** The environment of the traced gateways: a loopback bind and the test's bootstrap file. */
let testEnv: () => Record<string, string>;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(async () => {
  issuer = await startLocalIssuer({ path: '/idp-trace' });
  const dir = await mkdtemp(join(tmpdir(), 'gw-trace-'));
  const tenant = {
    id: 'acme',
    auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
    grants: [{ name: 'all', match: {}, allow: [{ source: 'docs' }] }],
    sources: [{ id: 'docs', type: 'static', resources: [{ uri: 'test://docs/1', name: 'one', text: 'one' }] }],
  };
  await writeFile(join(dir, 'gateway.json'), JSON.stringify({ tenants: [tenant] }));
  testEnv = () => ({ HOST: '127.0.0.1', PORT: '8080', GATEWAY_CONFIG: join(dir, 'gateway.json') });
  gateway = await buildTestApp({ env: testEnv(), tracerProvider: provider });
  ({ app, config } = gateway);
  token = await issuer.token({ aud: RESOURCE });
});

afterAll(async () => {
  await gateway?.close();
  await issuer?.close();
  await provider.shutdown();
});

beforeEach(() => exporter.reset());

function post(
  target: FastifyInstance,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
) {
  return target.inject({
    method: 'POST',
    url: '/t/acme/mcp',
    headers: {
      host: HOST,
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...headers,
    },
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: { ...MODERN_META, ...(params._meta as object) } },
    },
  });
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);

describe('request spans', () => {
  it('continue the HTTP traceparent, with authentication, cache and backend spans as children', async () => {
    const response = await post(
      app,
      'resources/list',
      {},
      { authorization: `Bearer ${token}`, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
    );
    expect(response.statusCode).toBe(200);
    const spans = exporter.getFinishedSpans();
    const [request] = named(spans, 'resources/list');
    expect(request).toBeDefined();
    const root = request as ReadableSpan;
    expect(root.spanContext().traceId).toBe(CLIENT_TRACE);
    expect(parentOf(root)).toBe(CLIENT_SPAN);
    expect(root.attributes).toMatchObject({
      'mcpgw.tenant': 'acme',
      'mcp.method.name': 'resources/list',
      'mcpgw.outcome': 'ok',
      'http.response.status_code': 200,
    });
    const id = root.spanContext().spanId;
    const [auth] = named(spans, 'authenticate');
    expect(parentOf(auth as ReadableSpan)).toBe(id);
    expect(auth?.attributes['mcpgw.auth.outcome']).toBe('ok');
    // The result cache misses, so the catalog is asked: its lookup nests under the result lookup,
    // and the backend call under the catalog lookup.
    const [result] = named(spans, 'cache result');
    expect(parentOf(result as ReadableSpan)).toBe(id);
    expect(result?.attributes['mcpgw.cache.hit']).toBe(false);
    const catalog = named(spans, 'cache catalog');
    expect(catalog.length).toBeGreaterThan(0);
    for (const lookup of catalog) expect(parentOf(lookup)).toBe(result?.spanContext().spanId);
    const backend = named(spans, 'backend listResources');
    expect(backend.length).toBeGreaterThan(0);
    const catalogIds = catalog.map((s) => s.spanContext().spanId);
    for (const call of backend) {
      expect(catalogIds).toContain(parentOf(call));
      expect(call.attributes).toMatchObject({ 'mcpgw.source': 'docs', 'mcpgw.source_type': 'static' });
    }
    for (const span of spans) expect(span.spanContext().traceId).toBe(CLIENT_TRACE);
    // Children lie within the request's span.
    for (const span of spans.filter((s) => s !== root)) {
      expect(hrToNs(span.startTime)).toBeGreaterThanOrEqual(hrToNs(root.startTime));
      expect(hrToNs(span.endTime)).toBeLessThanOrEqual(hrToNs(root.endTime));
    }
  });

  it("continue the message's _meta traceparent when the HTTP request has none", async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await post(
      app,
      'resources/read',
      { uri: 'test://docs/1', _meta: { traceparent: `00-${trace}-00f067aa0ba902b7-01` } },
      { authorization: `Bearer ${token}`, 'mcp-name': 'test://docs/1' },
    );
    expect(response.statusCode).toBe(200);
    const [request] = named(exporter.getFinishedSpans(), 'resources/read');
    expect(request?.spanContext().traceId).toBe(trace);
    expect(parentOf(request as ReadableSpan)).toBe('00f067aa0ba902b7');
    expect(named(exporter.getFinishedSpans(), 'backend read')[0]?.spanContext().traceId).toBe(trace);
  });

  it('start a new trace for a missing or malformed traceparent, and trace refusals too', async () => {
    const response = await post(app, 'resources/list', {}, { traceparent: `00-${'0'.repeat(32)}-${CLIENT_SPAN}-01` });
    expect(response.statusCode).toBe(401);
    const spans = exporter.getFinishedSpans();
    const [request] = named(spans, 'resources/list');
    expect(request?.spanContext().traceId).not.toBe('0'.repeat(32));
    expect(parentOf(request as ReadableSpan)).toBeUndefined();
    expect(request?.attributes['mcpgw.outcome']).toBe('http_401');
    const [auth] = named(spans, 'authenticate');
    expect(auth?.attributes['mcpgw.auth.outcome']).toBe('no_token');
    expect(parentOf(auth as ReadableSpan)).toBe(request?.spanContext().spanId);
  });
});

describe('OTLP/HTTP export (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let collector: Server;
  const received: Array<{ path: string | undefined; body: string }> = [];

  beforeAll(async () => {
    collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ path: request.url, body: Buffer.concat(chunks).toString('utf8') });
        response.setHeader('content-type', 'application/json').end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())));

  it('sends the request span, its trace continued, to the collector', async () => {
    const address = collector.address() as { port: number };
    const tracing = await startOtlpTracing({
      ...config.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${address.port}`,
      OTEL_SERVICE_NAME: 'gateway-under-test',
    });
    expect(tracing).toBeDefined();
    const exportingGateway = await buildTestApp({ env: testEnv(), tracerProvider: tracing!.provider });
    const exporting = exportingGateway.app;
    try {
      const response = await post(
        exporting,
        'resources/list',
        {},
        { authorization: `Bearer ${token}`, traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` },
      );
      expect(response.statusCode).toBe(200);
    } finally {
      await exportingGateway.close();
      await tracing!.shutdown();
    }
    expect(received.map((r) => r.path)).toContain('/v1/traces');
    const spans = received.flatMap((r) => {
      const body = JSON.parse(r.body) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
          scopeSpans: Array<{ spans: Array<{ name: string; traceId: string; parentSpanId?: string }> }>;
        }>;
      };
      return body.resourceSpans.flatMap((rs) =>
        rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ ...span, resource: rs.resource }))),
      );
    });
    const request = spans.find((span) => span.name === 'resources/list');
    expect(request).toMatchObject({ traceId: CLIENT_TRACE, parentSpanId: CLIENT_SPAN });
    expect(request?.resource.attributes).toContainEqual({
      key: 'service.name',
      value: { stringValue: 'gateway-under-test' },
    });
    expect(spans.map((span) => span.name)).toEqual(
      expect.arrayContaining(['authenticate', 'cache result', 'cache catalog', 'backend listResources']),
    );
  });
});

function hrToNs([seconds, nanos]: [number, number]): bigint {
  return BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
}
