import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '@mcpgw/config';
import { mintAccessToken } from '@mcpgw/authorization-server';
import { tenantKeystorePath } from '../src/local-issuers.js';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

// A loopback gateway without PUBLIC_URL answers as http://127.0.0.1:PORT,
// http://localhost:PORT and http://[::1]:PORT alike: the resource a client
// discovers is the URL it used (RFC 9728 §3.3), and a token for one name is
// good at the others (the same endpoint). Anything else gets the canonical one.

let app: FastifyInstance;
let config: GatewayConfig;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, config, close } = await buildTestApp({ env: { PORT: '8080' } }));
});
afterAll(() => close());

function list(host: string, token?: string) {
  return app.inject({
    method: 'POST',
    url: '/t/demo/mcp',
    headers: {
      host,
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'resources/list',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    payload: { jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: MODERN_META } },
  });
}

describe('loopback names on a loopback bind', () => {
  it.each([
    ['127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['localhost:8080', 'http://localhost:8080'],
    ['LOCALHOST:8080', 'http://localhost:8080'],
    ['[::1]:8080', 'http://[::1]:8080'],
    // Another port (a forwarded one, say) is not this gateway's name: the canonical one.
    ['localhost:9999', 'http://127.0.0.1:8080'],
  ])('Host %s: metadata and challenge name %s', async (host, base) => {
    const metadata = await app.inject({ url: '/.well-known/oauth-protected-resource/t/demo/mcp', headers: { host } });
    expect(metadata.json()).toMatchObject({
      resource: `${base}/t/demo/mcp`,
      // One issuer, on the canonical name: its metadata's `issuer` must equal it (RFC 8414 §3.3).
      authorization_servers: ['http://127.0.0.1:8080/t/demo/oauth'],
    });
    expect(metadata.headers.vary).toMatch(/host/i);
    const refused = await list(host);
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toContain(
      `resource_metadata="${base}/.well-known/oauth-protected-resource/t/demo/mcp"`,
    );
  });

  it('accepts a token for either name at either name, and none for another port', async () => {
    const mint = (resource: string) =>
      mintAccessToken({
        issuer: 'http://127.0.0.1:8080/t/demo/oauth',
        keystorePath: tenantKeystorePath(config, 'demo'),
        resource,
        scope: 'mcp:read',
      });
    for (const audience of ['http://localhost:8080/t/demo/mcp', 'http://127.0.0.1:8080/t/demo/mcp']) {
      const token = await mint(audience);
      for (const host of ['localhost:8080', '127.0.0.1:8080']) {
        expect((await list(host, token)).statusCode, `${audience} at ${host}`).toBe(200);
      }
    }
    expect((await list('localhost:8080', await mint('http://localhost:9999/t/demo/mcp'))).statusCode).toBe(401);
  });
});
