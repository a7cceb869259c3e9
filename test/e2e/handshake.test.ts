/**
 * How the official client meets the gateway in each era: the
 * modern `server/discover` probe pinned to 2026-07-28, and the stateless
 * legacy `initialize` handshake plus `ping`. Every response the client
 * received, including those it handles silently, is checked against the
 * revision's schema.json.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVISION_OF, connectClient, startE2eGateway } from './e2e-gateway.js';
import type { E2eGateway } from './e2e-gateway.js';
import { expectWireValid } from './wire-expectations.js';

const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

let e2e: E2eGateway;

beforeAll(async () => {
  e2e = await startE2eGateway();
});

afterAll(async () => {
  await e2e?.close();
});

describe('modern era, pinned to 2026-07-28', () => {
  it('connects through server/discover and learns what the gateway serves', async () => {
    const { client, recorder, close } = await connectClient(e2e.url, 'modern');
    try {
      expect(client.getProtocolEra()).toBe('modern');
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(client.getServerVersion()).toMatchObject({ name: 'mcp-resource-gateway' });
      expect(client.getServerCapabilities()?.resources).toBeDefined();
      // A resources-only gateway offers no tools or prompts.
      expect(client.getServerCapabilities()?.tools).toBeUndefined();
      expect(client.getServerCapabilities()?.prompts).toBeUndefined();

      // server/discover again, explicitly, as a user of the client would.
      const discover = await client.discover();
      expect(discover.supportedVersions).toEqual(expect.arrayContaining(['2026-07-28', '2025-11-25']));
      // (resultType is on the wire, checked by the schema; the client strips it.)
      expect(discover.cacheScope).toBe('public');
      expect(discover.ttlMs).toBeGreaterThan(0);
      expect(discover._meta?.[SERVER_INFO_META]).toMatchObject({ name: 'mcp-resource-gateway' });
      expect(client.getDiscoverResult()).toEqual(discover);

      const methods = recorder.exchanges.map((x) => `${x.method} ${methodOf(x.requestBody)}`);
      expect(methods).toEqual(['POST server/discover', 'POST server/discover']);
      expectWireValid(recorder, REVISION_OF.modern);
    } finally {
      await close();
    }
  });
});

describe('legacy era, initialize', () => {
  // After `notifications/initialized` the client opens its optional GET
  // stream; the gateway answers 405, and its error body must be schema-valid
  // too: JSONRPCErrorResponse.id is an optional string or integer, so an
  // unknown id is omitted, never null (this test found that bug once).
  it('initializes statelessly at 2025-11-25, without subscriptions or a session', async () => {
    const { client, recorder, close } = await connectClient(e2e.url, 'legacy');
    try {
      expect(client.getProtocolEra()).toBe('legacy');
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      expect(client.getServerVersion()).toMatchObject({ name: 'mcp-resource-gateway' });
      // "resources/subscribe not offered (subscribe capability false for legacy)".
      expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: false });

      await expect(client.ping()).resolves.toEqual({});

      // Stateless: no Mcp-Session-Id is minted, so the client never sends one back.
      expect(recorder.exchanges.filter((x) => 'mcp-session-id' in x.responseHeaders)).toEqual([]);
      expect(recorder.exchanges.filter((x) => 'mcp-session-id' in x.requestHeaders)).toEqual([]);
      const initialized = recorder.exchanges.find((x) => methodOf(x.requestBody) === 'notifications/initialized');
      expect(initialized?.status).toBe(202);
      expectWireValid(recorder, REVISION_OF.legacy);
    } finally {
      await close();
    }
  });
});

function methodOf(body: unknown): string {
  return typeof body === 'object' && body !== null && 'method' in body ? String(body.method) : '(no body)';
}
