import { describe, expect, it } from 'vitest';
import { silentLogger } from '@mcpgw/core';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import { dispatchMcpPost } from '../src/dispatch.js';
import type { ListenRequest } from '../src/subscriptions.js';
import type { ResourceService } from '../src/resource-service.js';

// The protocol layer's part of subscriptions/listen (MCP 2026-07-28,
// basic/patterns/subscriptions): which requests reach the app's `listen`, with
// what filter, and what the others get. The stream itself is the app's (its
// tests run against a real gateway).
const resources = {} as ResourceService;
const server = { name: 'gw', version: '1' };

function post(
  body: Record<string, unknown>,
  headers: Record<string, string>,
  listen?: (request: ListenRequest) => Promise<string>,
) {
  return dispatchMcpPost<string>(
    { header: (name) => headers[name], body, signal: new AbortController().signal },
    {
      server,
      resources,
      resourceCacheScope: 'private',
      discoverTtlMs: 1,
      logger: silentLogger,
      ...(listen === undefined ? {} : { listen }),
    },
  );
}

const modernHeaders = (method: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': method });
const listenBody = (notifications: unknown) => ({
  jsonrpc: '2.0',
  id: 'x',
  method: 'subscriptions/listen',
  params: { _meta: MODERN_META, notifications },
});

describe('subscriptions/listen dispatch', () => {
  it('hands a valid request to the app with its id and filter, duplicates dropped', async () => {
    const seen: ListenRequest[] = [];
    const response = await post(
      listenBody({ resourcesListChanged: true, resourceSubscriptions: ['a://1', 'a://1', 'b://2'] }),
      modernHeaders('subscriptions/listen'),
      async (request) => (seen.push(request), 'opened'),
    );
    expect(response).toEqual({ status: 200, subscription: 'opened' });
    expect(seen).toEqual([
      { id: 'x', filter: { resourcesListChanged: true, resourceSubscriptions: ['a://1', 'b://2'] } },
    ]);
  });

  it.each([
    ['no notifications', undefined],
    ['a non-boolean flag', { resourcesListChanged: 'yes' }],
    ['URIs that are not strings', { resourceSubscriptions: [1] }],
    ['too many URIs', { resourceSubscriptions: Array.from({ length: 1001 }, (_, i) => `a://${i}`) }],
  ])('refuses %s with -32602 and never opens a stream', async (_name, notifications) => {
    let opened = false;
    const response = await post(listenBody(notifications), modernHeaders('subscriptions/listen'), async () => {
      opened = true;
      return 'opened';
    });
    expect(response.body).toMatchObject({ id: 'x', error: { code: -32602 } });
    expect(opened).toBe(false);
  });

  it('checks the Mcp-Method header like any modern request', async () => {
    const response = await post(listenBody({}), modernHeaders('resources/list'), async () => 'opened');
    expect(response).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
  });

  it('is -32601 without a listen handler, and on the initialize era', async () => {
    expect(await post(listenBody({}), modernHeaders('subscriptions/listen'))).toMatchObject({
      status: 404,
      body: { error: { code: -32601 } },
    });
    const legacy = await post(
      { jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { notifications: {} } },
      { 'mcp-protocol-version': '2025-11-25' },
      async () => 'opened',
    );
    expect(legacy.body).toMatchObject({ error: { code: -32601 } });
  });

  it('advertises listChanged and subscribe on server/discover exactly when listen is served', async () => {
    const discover = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: MODERN_META } };
    const served = await post(discover, modernHeaders('server/discover'), async () => 'opened');
    expect(served.body).toMatchObject({
      result: { capabilities: { resources: { listChanged: true, subscribe: true } } },
    });
    const not = await post(discover, modernHeaders('server/discover'));
    expect(not.body).toMatchObject({ result: { capabilities: { resources: {} } } });
    expect(
      (not.body as unknown as { result: { capabilities: { resources: object } } }).result.capabilities.resources,
    ).toEqual({});
  });
});
