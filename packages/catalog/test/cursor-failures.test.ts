import { describe, expect, it } from 'vitest';
import type { Source } from '@mcpgw/core';
import { silentLogger, unrestrictedScope } from '@mcpgw/core';
import { createCursorCodec, dispatchMcpPost } from '@mcpgw/protocol';
import { createStaticSource } from '@mcpgw/source-static';
import { createCatalog } from '../src/catalog.js';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

/**
 * Every way a cursor can fail (the codec refuses it, the sealed state is not
 * ours, the tenant's sources changed, the source refuses its position) is one
 * error on the wire: MCPGW_CURSOR_INVALID, -32602, one message. Four places
 * once answered with four messages, which told a client which check it had
 * tripped.
 */
const secret = Buffer.from('u'.repeat(32));
const cursors = createCursorCodec({ key: secret });
function staticSource(id: string, count: number): Source {
  return createStaticSource(
    {
      resources: Array.from({ length: count }, (_, i) => ({ uri: `test://${id}/${i}`, name: `${id}-${i}`, text: 'x' })),
      templates: [{ uriTemplate: `test://${id}/t/{x}`, name: `${id}-template`, text: 'x={{x}}' }],
    },
    { sourceId: id, tenantId: 'acme', configDir: '.', logger: silentLogger },
  );
}

async function list(sources: readonly Source[], method: string, cursor: string) {
  const catalog = createCatalog({ tenantId: 'acme', sources, cursors });
  const response = await dispatchMcpPost(
    {
      header: (name) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': method })[name],
      body: { jsonrpc: '2.0', id: 1, method, params: { cursor, _meta: MODERN_META } },
      signal: new AbortController().signal,
    },
    {
      server: { name: 'gw', version: '1' },
      resources: catalog.forScope(unrestrictedScope),
      resourceCacheScope: 'private',
      discoverTtlMs: 1000,
      logger: silentLogger,
    },
  );
  return { status: response.status, error: (response.body as { error?: unknown }).error };
}

describe('cursor failures', () => {
  it('answer one code and one message, whichever check refuses the cursor', async () => {
    const a = staticSource('a', 3);
    const b = staticSource('b', 3);
    const binding = (listing: string) => ({ tenantId: 'acme', fingerprint: unrestrictedScope.fingerprint, listing });
    const minted = cursors.encode(binding('resources'), { source: 1, sourceId: 'b' });
    const failures = await Promise.all([
      // The codec: not a cursor we sealed.
      list([a, b], 'resources/list', 'not-a-cursor'),
      // The catalog: sealed by us, but not a state it wrote.
      list([a, b], 'resources/list', cursors.encode(binding('resources'), 'no state')),
      list([a, b], 'resources/templates/list', cursors.encode(binding('templates'), -1)),
      // The catalog: the tenant's sources were reordered since.
      list([b, a], 'resources/list', minted),
      list([a], 'resources/templates/list', cursors.encode(binding('templates'), 50)),
      // The source: a position it did not issue.
      list([a, b], 'resources/list', cursors.encode(binding('resources'), { source: 0, sourceId: 'a', position: 'x' })),
    ]);
    for (const failure of failures) {
      expect(failure).toEqual({
        status: 200,
        error: {
          code: -32602,
          message:
            'Invalid cursor: it is malformed, expired, or no longer matches this listing; list again without a cursor',
        },
      });
    }
  });
});
