import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';

// DNS rebinding (2026-07-28 transports, Security): a page served from an
// attacker's name that resolves to 127.0.0.1 reaches every route of a loopback
// gateway, not only the MCP endpoint. Every route checks Host and Origin.

let app: FastifyInstance;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await buildTestApp({ env: { PORT: '8080' } }));
});
afterAll(() => close());

const REGISTRATION = {
  redirect_uris: ['http://127.0.0.1:9/callback'],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code'],
  response_types: ['code'],
};

const ROUTES: Array<[string, 'GET' | 'POST', unknown?]> = [
  ['/.well-known/oauth-protected-resource/t/demo/mcp', 'GET'],
  ['/.well-known/oauth-authorization-server/t/demo/oauth', 'GET'],
  ['/t/demo/oauth/jwks', 'GET'],
  ['/t/demo/oauth/register', 'POST', REGISTRATION],
  ['/t/demo/oauth/authorize?client_id=x&response_type=code', 'GET'],
  ['/no-such-route', 'GET'],
];

describe('the Host/Origin guard on every route', () => {
  it.each(ROUTES)('%s (%s) refuses a rebinding Host with 403', async (url, method, payload) => {
    const response = await app.inject({
      method,
      url,
      headers: { host: 'rebind.attacker.example:8080' },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      error: 'forbidden',
      error_description: 'Forbidden: the Host header does not name this gateway',
    });
  });

  it.each(ROUTES)('%s (%s) refuses a foreign Origin with 403', async (url, method, payload) => {
    const response = await app.inject({
      method,
      url,
      headers: { host: '127.0.0.1:8080', origin: 'https://attacker.example' },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toBe('forbidden');
  });

  it('lets loopback callers register and read the documents', async () => {
    const registered = await app.inject({
      method: 'POST',
      url: '/t/demo/oauth/register',
      headers: { host: '127.0.0.1:8080', origin: 'http://localhost:6274' },
      payload: REGISTRATION,
    });
    expect(registered.statusCode).toBe(201);
    const metadata = await app.inject({
      url: '/.well-known/oauth-protected-resource/t/demo/mcp',
      headers: { host: '127.0.0.1:8080' },
    });
    expect(metadata.statusCode).toBe(200);
  });

  // Orchestrators reach a pod by its address (kubelet sends the pod IP as Host).
  it.each(['/healthz', '/readyz'])('%s answers whatever the Host and Origin, and says nothing more', async (url) => {
    const response = await app.inject({
      url,
      headers: { host: '10.244.3.17:8080', origin: 'https://attacker.example' },
    });
    // Not refused: /readyz says "starting" (503) here only because app.inject never listens.
    expect(response.statusCode).not.toBe(403);
    expect(response.json().status).toMatch(/^(ok|ready|starting)$/);
    expect(JSON.stringify(response.json())).not.toMatch(/demo|tenant|source/i);
  });

  it('keeps the MCP endpoint refusal a JSON-RPC error', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/t/demo/mcp',
      headers: { host: 'rebind.attacker.example:8080', 'content-type': 'application/json' },
      payload: {},
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });
});
