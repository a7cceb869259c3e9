import { describe, expect, it } from 'vitest';
import { silentLogger } from '@mcpgw/core';
import type { ResourceService } from '../src/resource-service.js';
import { dispatchMcpPost } from '../src/dispatch.js';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

// A two-resource service standing in for the catalog: this file tests the
// wire rules of the protocol layer alone; the catalog and the app have their
// own tests against real sources.
const service: ResourceService = {
  async listResources(cursor) {
    if (cursor === 'bad') throw new (await import('../src/index.js')).McpError(-32602, 'Invalid cursor');
    return { resources: [{ uri: 'test://a', name: 'a' }], nextCursor: 'next', ttlMs: 60_000 };
  },
  async listTemplates() {
    return { resourceTemplates: [{ uriTemplate: 'test://t/{id}', name: 't' }], ttlMs: 60_000 };
  },
  async read(uri) {
    if (uri === 'test://a') return { contents: [{ uri, mimeType: 'text/plain', text: 'A' }], ttlMs: 30_000 };
    if (uri === 'test://boom') throw new Error('connection string postgres://secret@db');
    return undefined;
  },
};

const server = { name: 'gw', version: '1.2.3', instructions: 'read things' };
function post(body: unknown, headers: Record<string, string> = {}) {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return dispatchMcpPost(
    { header: (name) => lower[name], body, signal: new AbortController().signal },
    { server, resources: service, resourceCacheScope: 'private', discoverTtlMs: 300_000, logger: silentLogger },
  );
}

function modern(method: string, params: Record<string, unknown> = {}, extra: Record<string, string> = {}) {
  return post(
    { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: MODERN_META } },
    { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...extra },
  );
}

describe('modern era (2026-07-28)', () => {
  it('server/discover lists versions, resources capability, serverInfo and public caching', async () => {
    const response = await modern('server/discover');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: 7,
      result: {
        resultType: 'complete',
        supportedVersions: expect.arrayContaining(['2026-07-28', '2025-11-25']),
        capabilities: { resources: {} },
        instructions: 'read things',
        ttlMs: 300_000,
        cacheScope: 'public',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'gw', version: '1.2.3' } },
      },
    });
  });

  it('resources/list carries resultType, ttlMs, private cacheScope and nextCursor', async () => {
    const response = await modern('resources/list');
    expect(response.body).toMatchObject({
      result: {
        resultType: 'complete',
        resources: [{ uri: 'test://a' }],
        nextCursor: 'next',
        ttlMs: 60_000,
        cacheScope: 'private',
      },
    });
  });

  it('resources/read returns contents when Mcp-Name matches, plain or base64-encoded', async () => {
    const plain = await modern('resources/read', { uri: 'test://a' }, { 'Mcp-Name': 'test://a' });
    expect(plain.body).toMatchObject({ result: { contents: [{ uri: 'test://a', text: 'A' }], ttlMs: 30_000 } });
    const encoded = `=?base64?${Buffer.from('test://a').toString('base64')}?=`;
    const viaBase64 = await modern('resources/read', { uri: 'test://a' }, { 'Mcp-Name': encoded });
    expect(viaBase64.status).toBe(200);
    expect(viaBase64.body).toHaveProperty('result.contents');
  });

  it('a missing resource is -32602 with data.uri, never empty contents', async () => {
    const response = await modern('resources/read', { uri: 'test://none' }, { 'Mcp-Name': 'test://none' });
    expect(response.body).toMatchObject({ id: 7, error: { code: -32602, data: { uri: 'test://none' } } });
    expect(response.body).not.toHaveProperty('result');
  });

  it('an internal failure is -32603 without internals', async () => {
    const response = await modern('resources/read', { uri: 'test://boom' }, { 'Mcp-Name': 'test://boom' });
    expect(response.body).toMatchObject({ error: { code: -32603, message: 'Internal error' } });
    expect(JSON.stringify(response.body)).not.toContain('secret');
  });

  it.each([
    ['no _meta', { jsonrpc: '2.0', id: 1, method: 'resources/list', params: {} }],
    [
      'no protocolVersion',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/list',
        params: { _meta: { 'io.modelcontextprotocol/clientCapabilities': {} } },
      },
    ],
    [
      'no clientCapabilities',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'resources/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
      },
    ],
  ])('%s → HTTP 400 + -32602 echoing the id', async (_name, body) => {
    const response = await post(body, { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'resources/list' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ id: 1, error: { code: -32602 } });
  });

  it('an unsupported version → 400 + -32022 with supported and requested', async () => {
    const response = await post(
      {
        jsonrpc: '2.0',
        id: 'x',
        method: 'resources/list',
        params: { _meta: { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '1900-01-01' } },
      },
      { 'MCP-Protocol-Version': '1900-01-01', 'Mcp-Method': 'resources/list' },
    );
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      id: 'x',
      error: { code: -32022, data: { requested: '1900-01-01', supported: expect.arrayContaining(['2026-07-28']) } },
    });
  });

  it.each([
    [
      'header version differs from _meta',
      { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'resources/list' },
      { ...MODERN_META, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' },
    ],
    ['Mcp-Method missing', { 'MCP-Protocol-Version': '2026-07-28' }, MODERN_META],
    [
      'Mcp-Method differs from body',
      { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'resources/read' },
      MODERN_META,
    ],
    ['protocol version header missing but _meta modern', { 'Mcp-Method': 'resources/list' }, MODERN_META],
  ])('%s → 400 + -32020', async (_name, headers, meta) => {
    const response = await post({ jsonrpc: '2.0', id: 3, method: 'resources/list', params: { _meta: meta } }, headers);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ id: 3, error: { code: -32020 } });
  });

  it.each([
    ['missing', undefined],
    ['different', 'test://b'],
    ['base64 of a different value', `=?base64?${Buffer.from('test://b').toString('base64')}?=`],
    ['broken base64', '=?base64?@@@?='],
    ['non-ASCII characters', 'test://ä'],
  ])('Mcp-Name %s → 400 + -32020', async (_name, value) => {
    const response = await modern(
      'resources/read',
      { uri: 'test://a' },
      value === undefined ? {} : { 'Mcp-Name': value },
    );
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: { code: -32020 } });
  });

  it.each([
    'initialize',
    'ping',
    'logging/setLevel',
    'resources/subscribe',
    'resources/unsubscribe',
    'tools/list',
    'no/such',
  ])('%s → 404 + -32601', async (method) => {
    const response = await modern(method);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it('a prototype key as method name is just an unknown method', async () => {
    const response = await modern('__proto__');
    expect(response.status).toBe(404);
  });
});

describe('envelope', () => {
  it('a notification → 202 with no body', async () => {
    const response = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(response).toEqual({ status: 202 });
  });

  it.each([
    ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'ping' }]],
    ['a string', 'hello'],
    ['a response', { jsonrpc: '2.0', id: 1, result: {} }],
    ['wrong jsonrpc', { jsonrpc: '1.0', id: 1, method: 'ping' }],
    ['non-object params', { jsonrpc: '2.0', id: 1, method: 'ping', params: [1] }],
    ['a null id', { jsonrpc: '2.0', id: null, method: 'ping' }],
    ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'ping' }],
  ])('%s → 400 + -32600', async (_name, body) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: { code: -32600 } });
  });
});

describe('legacy era (initialize)', () => {
  it('negotiates a supported version and offers no subscriptions', async () => {
    const response = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { resources: { subscribe: false, listChanged: false } },
        serverInfo: { name: 'gw', version: '1.2.3' },
      },
    });
  });

  it('answers an unknown requested version with the newest legacy one', async () => {
    const response = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2024-01-01', capabilities: {} },
    });
    expect(response.body).toMatchObject({ result: { protocolVersion: '2025-11-25' } });
  });

  it('serves lists in the legacy shape, without modern fields', async () => {
    const response = await post(
      { jsonrpc: '2.0', id: 2, method: 'resources/list' },
      { 'MCP-Protocol-Version': '2025-11-25' },
    );
    expect(response.body).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { resources: [{ uri: 'test://a', name: 'a' }], nextCursor: 'next' },
    });
  });

  it('ping → {}', async () => {
    const response = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, { 'MCP-Protocol-Version': '2025-11-25' });
    expect(response.body).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
  });

  it('a missing resource is -32002 with data.uri, as 2025-11-25 defines', async () => {
    const response = await post(
      { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri: 'test://none' } },
      { 'MCP-Protocol-Version': '2025-11-25' },
    );
    expect(response.body).toMatchObject({ error: { code: -32002, data: { uri: 'test://none' } } });
  });

  it('resources/subscribe is not offered', async () => {
    const response = await post(
      { jsonrpc: '2.0', id: 5, method: 'resources/subscribe', params: { uri: 'test://a' } },
      { 'MCP-Protocol-Version': '2025-11-25' },
    );
    expect(response.body).toMatchObject({ error: { code: -32601 } });
  });
});

describe('cache eligibility', () => {
  // 2026-07-28 server/utilities/caching, Cache Key: results of requests
  // carrying inputResponses or requestState "MUST NOT be cached".
  it.each([
    ['a plain request', {}, true],
    ['one carrying requestState', { requestState: 'abc' }, false],
    ['one carrying inputResponses', { inputResponses: {} }, false],
  ])('%s is cacheable: %s', async (_name, extra, expected) => {
    const seen: Array<boolean | undefined> = [];
    const recording: ResourceService = {
      ...service,
      async listResources(cursor, signal, options) {
        seen.push(options?.cacheable);
        return service.listResources(cursor, signal, options);
      },
      async read(uri, signal, options) {
        seen.push(options?.cacheable);
        return service.read(uri, signal, options);
      },
    };
    const context = {
      server,
      resources: recording,
      resourceCacheScope: 'private' as const,
      discoverTtlMs: 1,
      logger: silentLogger,
    };
    const headers: Record<string, string> = { 'mcp-protocol-version': '2026-07-28' };
    for (const [method, params] of [
      ['resources/list', { ...extra }],
      ['resources/read', { uri: 'test://a', ...extra }],
    ] as const) {
      const lookup = { ...headers, 'mcp-method': method, 'mcp-name': 'test://a' };
      await dispatchMcpPost(
        {
          header: (name) => lookup[name as keyof typeof lookup],
          body: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } },
          signal: new AbortController().signal,
        },
        context,
      );
    }
    expect(seen).toEqual([expected, expected]);
  });
});

describe('a request its client cancelled', () => {
  it('is not logged as a server fault; the same failure uncancelled is', async () => {
    const lines: string[] = [];
    const logger = {
      ...silentLogger,
      error: (_fields: object, message?: string) => lines.push(`error ${message}`),
      debug: (_fields: object, message?: string) => lines.push(`debug ${message}`),
    };
    // A backend that answers only by failing once its request is cancelled, or at once when told to.
    const hanging: ResourceService = {
      ...service,
      listResources: (_cursor, signal) =>
        new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error))),
      read: async () => {
        throw new Error('backend down');
      },
    };
    const context = { server, resources: hanging, resourceCacheScope: 'private' as const, discoverTtlMs: 1, logger };
    const call = (method: string, params: Record<string, unknown>, signal: AbortSignal) =>
      dispatchMcpPost(
        {
          header: (name) =>
            ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': 'test://a' })[name],
          body: { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } },
          signal,
        },
        context,
      );
    const controller = new AbortController();
    const cancelled = call('resources/list', {}, controller.signal);
    controller.abort(new Error('client disconnected'));
    expect((await cancelled).body).toMatchObject({ error: { code: -32603 } });
    expect(lines).toEqual(['debug request cancelled']);
    expect((await call('resources/read', { uri: 'test://a' }, new AbortController().signal)).body).toMatchObject({
      error: { code: -32603 },
    });
    expect(lines).toEqual(['debug request cancelled', 'error request failed']);
  });
});
