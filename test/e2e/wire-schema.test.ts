/**
 * The schema checker the end-to-end tests rely on must be able to fail: these
 * feed it hand-made bodies, good and bad, for both revisions.
 */
import { describe, expect, it } from 'vitest';
import { validateErrorResponse, validateResponseBody } from '@mcpgw/test-helpers/wire-schema';

const meta = { 'io.modelcontextprotocol/serverInfo': { name: 'gw', version: '1' } };
const modernList = {
  jsonrpc: '2.0',
  id: 1,
  result: {
    resultType: 'complete',
    resources: [{ uri: 'test://a', name: 'a' }],
    ttlMs: 1000,
    cacheScope: 'private',
    _meta: meta,
  },
};

describe('validateResponseBody', () => {
  it('accepts a complete 2026-07-28 resources/list result', () => {
    expect(validateResponseBody('2026-07-28', 'resources/list', modernList)).toEqual([]);
  });

  it('reports a 2026-07-28 result without resultType, ttlMs or cacheScope, naming each', () => {
    const { resultType: _r, ttlMs: _t, cacheScope: _c, ...bare } = modernList.result;
    const problems = validateResponseBody('2026-07-28', 'resources/list', { ...modernList, result: bare });
    expect(problems.join('\n')).toMatch(/resultType/);
    expect(problems.join('\n')).toMatch(/ttlMs/);
    expect(problems.join('\n')).toMatch(/cacheScope/);
  });

  it('reports a resource without a name and a blob that is not base64', () => {
    const body = {
      jsonrpc: '2.0',
      id: 2,
      result: { contents: [{ uri: 'test://a', blob: '!!not base64!!' }] },
    };
    expect(validateResponseBody('2025-11-25', 'resources/read', body).join('\n')).toMatch(/blob.*format/);
    const list = { jsonrpc: '2.0', id: 3, result: { resources: [{ uri: 'test://a' }] } };
    expect(validateResponseBody('2025-11-25', 'resources/list', list).join('\n')).toMatch(/name/);
  });

  it('accepts a 2025-11-25 initialize result and ping', () => {
    const init = {
      jsonrpc: '2.0',
      id: 0,
      result: {
        protocolVersion: '2025-11-25',
        capabilities: { resources: {} },
        serverInfo: { name: 'gw', version: '1' },
      },
    };
    expect(validateResponseBody('2025-11-25', 'initialize', init)).toEqual([]);
    expect(validateResponseBody('2025-11-25', 'ping', { jsonrpc: '2.0', id: 1, result: {} })).toEqual([]);
  });

  it('refuses to judge a result of a method it has no result type for', () => {
    const body = { jsonrpc: '2.0', id: 1, result: { resultType: 'complete' } };
    expect(validateResponseBody('2026-07-28', 'ping', body)).toEqual([
      'no 2026-07-28 result type is known for method ping',
    ]);
  });
});

describe('validateErrorResponse', () => {
  it('accepts a not-found error of either revision', () => {
    const notFound = (code: number) => ({
      jsonrpc: '2.0',
      id: 4,
      error: { code, message: 'Resource not found', data: { uri: 'test://x' } },
    });
    expect(validateErrorResponse('2026-07-28', notFound(-32602))).toEqual([]);
    expect(validateErrorResponse('2025-11-25', notFound(-32002))).toEqual([]);
  });

  it('checks the specific 2026-07-28 error types: -32022 needs data.supported and data.requested', () => {
    const bare = { jsonrpc: '2.0', id: 1, error: { code: -32022, message: 'Unsupported protocol version' } };
    expect(validateErrorResponse('2026-07-28', bare).join('\n')).toMatch(/UnsupportedProtocolVersionError/);
    const full = { ...bare, error: { ...bare.error, data: { supported: ['2026-07-28'], requested: '1999-01-01' } } };
    expect(validateErrorResponse('2026-07-28', full)).toEqual([]);
  });

  it('reports an id of null, which MCP RequestId does not allow', () => {
    const body = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } };
    expect(validateErrorResponse('2025-11-25', body).join('\n')).toMatch(/\/id must be string,integer/);
  });
});
