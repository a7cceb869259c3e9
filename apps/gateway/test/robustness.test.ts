import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';

// "No input may crash or hang the process": random bodies and headers,
// well-formed and not, against the real app. Every answer must be a proper
// HTTP status with a JSON-RPC error or result, never a 5xx.

const BOOTSTRAP = {
  configDir: '.',
  document: {
    tenants: [
      {
        id: 'fuzz',
        anonymous: true,
        sources: [
          {
            id: 'fixtures',
            type: 'static',
            resources: [{ uri: 'test://a', name: 'a', text: 'A' }],
            templates: [
              { uriTemplate: 'test://t/{id}', name: 't', mimeType: 'application/json', text: '{"id":"{{id}}"}' },
            ],
          },
        ],
      },
    ],
  },
};

let app: FastifyInstance;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ app, close } = await buildTestApp({ bootstrap: BOOTSTRAP }));
});
afterAll(() => close());

const METHODS = [
  'server/discover',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'initialize',
  'ping',
  'x',
];
const method = fc.oneof(fc.constantFrom(...METHODS), fc.string({ maxLength: 20 }));
const version = fc.oneof(
  fc.constantFrom('2026-07-28', '2025-11-25', '2025-03-26', '1900-01-01'),
  fc.string({ maxLength: 12 }),
);
const uri = fc.oneof(
  fc.constantFrom('test://a', 'test://t/1', 'test://t/%00', 'test://../a', ''),
  fc.string({ maxLength: 40 }),
  fc.webUrl(),
);
const headerText = fc.string({ maxLength: 30 }).filter((value) => /^[\x20-\x7e]*$/.test(value));

const meta = fc.oneof(
  fc.constant(undefined),
  fc.record({
    'io.modelcontextprotocol/protocolVersion': version,
    'io.modelcontextprotocol/clientCapabilities': fc.oneof(fc.object(), fc.jsonValue()),
  }),
  fc.jsonValue(),
);
const params = fc.oneof(
  fc.record(
    { _meta: meta, uri: fc.option(uri), cursor: fc.option(fc.oneof(fc.string(), fc.jsonValue())) },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const body = fc.oneof(
  fc.record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue()),
      id: fc.oneof(fc.integer(), fc.string(), fc.jsonValue()),
      method,
      params,
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const headers = fc.record(
  {
    'mcp-protocol-version': fc.oneof(version, headerText),
    'mcp-method': fc.oneof(
      method.filter((value) => /^[\x20-\x7e]*$/.test(value)),
      headerText,
    ),
    'mcp-name': fc.oneof(
      headerText,
      uri.map((value) => `=?base64?${Buffer.from(value).toString('base64')}?=`),
    ),
  },
  { requiredKeys: [] },
);

describe('robustness', () => {
  it('answers every random request with a JSON-RPC message and a 2xx/4xx status', async () => {
    await fc.assert(
      fc.asyncProperty(body, headers, async (payload, extra) => {
        const response = await app.inject({
          method: 'POST',
          url: '/t/fuzz/mcp',
          headers: { 'content-type': 'application/json', ...extra },
          payload: JSON.stringify(payload),
        });
        expect([200, 202, 400, 404, 413, 415]).toContain(response.statusCode);
        if (response.statusCode === 202) {
          expect(response.body).toBe('');
          return;
        }
        const message = response.json() as {
          jsonrpc: string;
          id?: unknown;
          result?: unknown;
          error?: { code: unknown; message: unknown };
        };
        expect(message.jsonrpc).toBe('2.0');
        expect(message.id === undefined || typeof message.id === 'string' || Number.isInteger(message.id)).toBe(true);
        if (message.error === undefined) {
          expect(message.result).toBeTypeOf('object');
        } else {
          expect(Number.isInteger(message.error.code)).toBe(true);
          expect(message.error.code).not.toBe(-32603);
          expect(message.error.message).toBeTypeOf('string');
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('survives raw bytes that are not JSON at all', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
        const response = await app.inject({
          method: 'POST',
          url: '/t/fuzz/mcp',
          headers: { 'content-type': 'application/json' },
          payload: Buffer.from(bytes),
        });
        expect(response.statusCode).toBeGreaterThanOrEqual(200);
        expect(response.statusCode).toBeLessThan(500);
      }),
      { numRuns: 500 },
    );
  });
});
