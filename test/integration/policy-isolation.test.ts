import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Principal, Source } from '@mcpgw/core';
import { silentLogger } from '@mcpgw/core';
import { createCatalog } from '@mcpgw/catalog';
import type { Grant } from '@mcpgw/policy';
import { resolveAccess } from '@mcpgw/policy';
import { createCursorCodec } from '@mcpgw/protocol';
import { createStaticSource } from '@mcpgw/source-static';
import { oracleAllows } from '@mcpgw/test-helpers/grant-oracle';

// Property: for random tenants, principals, grants and URIs,
// nothing outside a caller's set is ever listed or readable, and a cursor
// minted for one principal is refused for another. Real catalog, real static
// sources, real policy; the oracle below re-states the grant semantics
// independently (a recursive matcher, not the compiled matcher under test).

const SOURCES = ['alpha', 'beta', 'gamma'] as const;
const DIRS = ['pub', 'priv', 'x'] as const;
const signal = new AbortController().signal;
const cursors = createCursorCodec({ key: Buffer.from('p'.repeat(32)) });

function universe(source: string): string[] {
  return DIRS.flatMap((dir) => Array.from({ length: 4 }, (_, i) => `test://${source}/${dir}/${i}`));
}

function buildSources(tenant: string): Source[] {
  return SOURCES.map((id) =>
    createStaticSource(
      { resources: universe(id).map((uri) => ({ uri, name: uri, text: uri })), templates: [] },
      { sourceId: id, tenantId: tenant, configDir: '.', logger: silentLogger },
    ),
  );
}

const token = fc.constantFrom('a', 'b', 'c');
const patternFor = (source: string) =>
  fc.constantFrom(
    `test://${source}/pub/**`,
    `test://${source}/*/1`,
    `test://${source}/priv/*`,
    `test://${source}/**`,
    `test://other/**`,
  );
const grant: fc.Arbitrary<Grant> = fc.record({
  name: fc.string({ minLength: 1, maxLength: 4 }),
  match: fc.record(
    {
      scopes: fc.array(token, { maxLength: 2 }),
      groups: fc.array(token, { maxLength: 2 }),
      subjects: fc.array(token, { maxLength: 2 }),
    },
    { requiredKeys: [] },
  ),
  allow: fc.array(
    fc.constantFrom(...SOURCES).chain((source) =>
      fc.record({
        source: fc.constant(source),
        uris: fc.option(fc.array(patternFor(source), { minLength: 1, maxLength: 2 }), { nil: undefined }),
      }),
    ),
    { maxLength: 3 },
  ),
});
const principal: fc.Arbitrary<Principal> = fc.record({
  issuer: fc.constantFrom('https://idp.one', 'https://idp.two'),
  subject: token,
  scopes: fc.array(token, { maxLength: 3 }),
  groups: fc.array(token, { maxLength: 3 }),
  expiresAt: fc.constant(0),
});

describe('tenant and principal isolation (property)', () => {
  it('lists and reads exactly what the grants allow; cursors do not cross principals or tenants', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('acme', 'globex'),
        fc.array(grant, { maxLength: 4 }),
        principal,
        principal,
        async (tenant, grants, who, other) => {
          const catalog = createCatalog({ tenantId: tenant, sources: buildSources(tenant), cursors, pageSize: 5 });
          const scope = resolveAccess(tenant, who, grants);
          const service = catalog.forScope(scope);

          const listed: string[] = [];
          const seenCursors: string[] = [];
          let cursor: string | undefined;
          for (let pages = 0; pages < 100; pages += 1) {
            const page = await service.listResources(cursor, signal);
            listed.push(...page.resources.map((r) => r.uri));
            cursor = page.nextCursor;
            if (cursor === undefined) break;
            seenCursors.push(cursor);
          }
          const expected = SOURCES.flatMap((s) => universe(s).filter((uri) => oracleAllows(grants, who, s, uri)));
          expect(listed).toEqual(expected);

          for (const s of SOURCES) {
            for (const uri of [...universe(s), `test://${s}/pub/../priv/1`]) {
              const result = await service.read(uri, signal);
              expect(result !== undefined, uri).toBe(oracleAllows(grants, who, s, uri) && !uri.includes('..'));
            }
          }

          const otherScope = resolveAccess(tenant, other, grants);
          const foreignTenant = createCatalog({
            tenantId: tenant === 'acme' ? 'globex' : 'acme',
            sources: buildSources('z'),
            cursors,
            pageSize: 5,
          });
          for (const minted of seenCursors) {
            if (otherScope.fingerprint !== scope.fingerprint) {
              await expect(catalog.forScope(otherScope).listResources(minted, signal)).rejects.toMatchObject({
                code: 'MCPGW_CURSOR_INVALID',
              });
            }
            await expect(foreignTenant.forScope(scope).listResources(minted, signal)).rejects.toMatchObject({
              code: 'MCPGW_CURSOR_INVALID',
            });
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
