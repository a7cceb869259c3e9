import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

// Transport behaviour of the endpoint, without authentication in the way: an
// anonymous tenant (loopback-only development mode) with a static source.
// Authentication has its own tests (test/integration/auth.test.ts).
const BOOTSTRAP = {
  configDir: '.',
  document: {
    tenants: [
      {
        id: 'conformance',
        anonymous: true,
        sources: [
          {
            id: 'fixtures',
            type: 'static',
            resources: [{ uri: 'test://static-text', name: 'static-text', mimeType: 'text/plain', text: 'hello' }],
            templates: [
              {
                uriTemplate: 'test://template/{id}/data',
                name: 'template-data',
                mimeType: 'application/json',
                text: '{"id":"{{id}}"}',
              },
            ],
          },
        ],
      },
    ],
  },
};
const MODERN = { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28' };

let app: FastifyInstance;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await buildTestApp({ bootstrap: BOOTSTRAP }));
});
afterAll(() => close());

function call(method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/t/conformance/mcp',
    headers: { ...MODERN, 'mcp-method': method, ...headers },
    payload: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } },
  });
}

describe('POST /t/{tenant}/mcp', () => {
  it('serves resources/list as a JSON-RPC result', async () => {
    const response = await call('resources/list');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      result: { resultType: 'complete', cacheScope: 'private' },
    });
    expect(response.json().result.resources.map((r: { uri: string }) => r.uri)).toContain('test://static-text');
  });

  it('reads a template resource through the static source', async () => {
    const response = await call(
      'resources/read',
      { uri: 'test://template/123/data' },
      { 'mcp-name': 'test://template/123/data' },
    );
    expect(response.json().result.contents).toEqual([
      expect.objectContaining({ uri: 'test://template/123/data', text: expect.stringContaining('"id":"123"') }),
    ]);
  });

  it('an unknown tenant → 404 with a JSON-RPC error', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/t/nobody/mcp',
      headers: MODERN,
      payload: { jsonrpc: '2.0', id: 1, method: 'server/discover' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32600, message: expect.stringContaining('nobody') },
    });
  });

  it.each(['GET', 'DELETE'] as const)('%s → 405 with Allow: POST', async (method) => {
    const response = await app.inject({ method, url: '/t/conformance/mcp' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(response.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('malformed JSON → 400 + -32700', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/t/conformance/mcp',
      headers: MODERN,
      payload: '{"jsonrpc": "2.0", ',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: { code: -32700 } });
    // MCP types an unreadable id as absent, never null.
    expect(response.json()).not.toHaveProperty('id');
  });

  it('a non-JSON content type → 415', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/t/conformance/mcp',
      headers: { ...MODERN, 'content-type': 'text/plain' },
      payload: 'hi',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('a body over 1 MiB → 413', async () => {
    const payload = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/list',
      params: { pad: 'x'.repeat(1024 * 1024) },
    });
    const response = await app.inject({ method: 'POST', url: '/t/conformance/mcp', headers: MODERN, payload });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('a body shorter than its Content-Length → 400 naming Content-Length, not Content-Type', async () => {
    const payload = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: MODERN_META } });
    const response = await app.inject({
      method: 'POST',
      url: '/t/conformance/mcp',
      headers: { ...MODERN, 'mcp-method': 'resources/list', 'content-length': String(payload.length + 10) },
      payload,
    });
    expect(response.statusCode).toBe(400);
    const { error } = response.json() as { error: { code: number; message: string } };
    expect(error.code).toBe(-32600);
    expect(error.message).toMatch(/Content-Length/);
    expect(error.message).not.toMatch(/Content-Type/);
  });

  it('a prototype-pollution body is refused and changes nothing', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/t/conformance/mcp',
      headers: { ...MODERN, 'mcp-method': 'resources/list' },
      payload: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"__proto__":{"polluted":true},"_meta":${JSON.stringify(MODERN_META)}}}`,
    });
    expect(response.statusCode).toBe(400);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a notification → 202 with an empty body', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/t/conformance/mcp',
      headers: MODERN,
      payload: { jsonrpc: '2.0', method: 'notifications/initialized' },
    });
    expect(response.statusCode).toBe(202);
    expect(response.body).toBe('');
  });

  it.each([
    ['a foreign Origin', { origin: 'https://evil.example.com' }],
    ['Origin null', { origin: 'null' }],
    ['a foreign Host (DNS rebinding)', { host: 'evil.example.com' }],
  ])('%s → 403', async (_name, headers) => {
    const response = await call('server/discover', {}, headers);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('a loopback Origin is allowed on a loopback bind', async () => {
    const response = await call('server/discover', {}, { origin: 'http://localhost:6274' });
    expect(response.statusCode).toBe(200);
  });
});

describe('health', () => {
  it('/healthz answers; /readyz says a gateway that is not listening is not ready yet', async () => {
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    // Readiness of a listening gateway: readiness.test.ts.
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'starting', checks: { listening: false } });
  });
});
