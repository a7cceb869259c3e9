import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '@mcpgw/config';
import { mintTenantToken } from '../src/token-cli.js';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

// What an operator reads per request: the tenant, the MCP method (from the
// header on 2026-07-28, from the body in the initialize era), the JSON-RPC
// error code, status, latency, who (a short fingerprint) through which
// client; and why a caller was refused. Never the token.

const lines: Array<Record<string, unknown>> = [];
const raw: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      raw.push(line);
      lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  },
});

let app: FastifyInstance;
let config: GatewayConfig;
let close: () => Promise<void>;
let token: string;

beforeAll(async () => {
  ({ app, config, close } = await buildTestApp({ env: { PORT: '8080' }, logStream }));
  token = (await mintTenantToken(config, { tenant: 'demo', sub: 'alice@example.com' })).token;
});
afterAll(() => close());

async function post(headers: Record<string, string>, payload: object) {
  const before = lines.length;
  const response = await app.inject({
    method: 'POST',
    url: '/t/demo/mcp',
    headers: { host: '127.0.0.1:8080', 'content-type': 'application/json', ...headers },
    payload,
  });
  // pino writes synchronously to the stream once the response is finished.
  const written = lines.slice(before);
  return { response, request: written.find((line) => line.msg === 'request'), written };
}

function modern(method: string, params: object = {}) {
  return post(
    { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': method },
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } },
  );
}

describe('the request log line', () => {
  it('carries tenant, MCP method, status, latency, principal fingerprint and client id', async () => {
    const { response, request } = await modern('resources/list');
    expect(response.statusCode).toBe(200);
    expect(request).toMatchObject({
      level: 30,
      tenant: 'demo',
      mcpMethod: 'resources/list',
      status: 200,
      ms: expect.any(Number),
      principal: expect.stringMatching(/^[\w-]{12}$/),
      tenantPrincipal: expect.stringMatching(/^[\w-]{12}$/),
      clientId: 'dev-token-cli',
    });
    // The tenant's fingerprint (what its admins see) is keyed apart from the gateway-wide one.
    expect(request?.tenantPrincipal).not.toBe(request?.principal);
    expect(request).not.toHaveProperty('rpcError');
  });

  it('takes the method from the body in the initialize era, which sends no Mcp-Method header', async () => {
    const { response, request } = await post(
      { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      },
    );
    expect(response.statusCode).toBe(200);
    expect(request).toMatchObject({ tenant: 'demo', mcpMethod: 'initialize', status: 200 });
  });

  it('carries the JSON-RPC error code when the result is an error', async () => {
    const { response, request } = await modern('resources/read', { uri: 'file:///handbook/no-such-page.md' });
    const code = response.json().error.code;
    expect(code).toEqual(expect.any(Number));
    expect(request).toMatchObject({ mcpMethod: 'resources/read', rpcError: code });
  });

  it('gives the same caller the same fingerprint, and another caller another', async () => {
    const first = (await modern('resources/list')).request?.principal;
    const again = (await modern('resources/list')).request?.principal;
    const bob = (await mintTenantToken(config, { tenant: 'demo', sub: 'bob@example.com' })).token;
    const other = (
      await post(
        { authorization: `Bearer ${bob}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'resources/list' },
        { jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: MODERN_META } },
      )
    ).request?.principal;
    expect(again).toBe(first);
    expect(other).not.toBe(first);
  });
});

describe('authentication refusals', () => {
  it.each([
    ['no token', {}, 'no_token', 401],
    ['a token that is not one', { authorization: 'Bearer not-a-token' }, 'invalid_token', 401],
    ['a token in two headers', { authorization: 'Bearer a, Bearer b' }, 'invalid_request', 400],
  ])('logs %s at info with its reason code', async (_name, headers: Record<string, string>, reason, status) => {
    const { response, written, request } = await post(
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'resources/list', ...headers },
      { jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: MODERN_META } },
    );
    expect(response.statusCode).toBe(status);
    expect(written.find((line) => line.msg === 'authentication refused')).toMatchObject({
      level: 30,
      tenant: 'demo',
      reason,
      status,
    });
    expect(request).toMatchObject({ tenant: 'demo', mcpMethod: 'resources/list', status, rpcError: -32600 });
    expect(request).not.toHaveProperty('principal');
  });
});

describe('the log stream as a whole', () => {
  it('never holds a token', () => {
    expect(raw.length).toBeGreaterThan(10);
    const signature = token.split('.')[2] ?? token;
    for (const line of raw) {
      expect(line).not.toContain(signature);
      expect(line).not.toContain('not-a-token');
      expect(line).not.toContain('alice@example.com');
    }
  });
});
