import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRouteTable } from '@mcpgw/gateway/testing';
import { type AdminFixture, startAdminFixture } from './admin-fixture.js';
import { expectRegisteredProblem } from './registered-problem.js';

// "No input may crash the process", for the admin surface: random bodies,
// names and conditional headers on every route, sent as an operator (so that
// each request reaches the handler). Every answer is a 2xx or a problem
// details document with a 4xx status, never a 5xx, and every problem is one
// of the registry's types with its status and title.

const routes = adminRouteTable('http://unused').list();

const name = fc.oneof(
  fc.constantFrom('notes', 'staff', 'admins', 'x', '%2F', '..', 'a%00b', encodeURIComponent('http://127.0.0.1:1/i')),
  fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent),
);
const tenant = fc.oneof(
  fc.constantFrom('beta', 'no-such', 'BETA', '-x', 'a'.repeat(70)),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      type: fc.constantFrom('static', 'postgres', 'files', 's3', 'nope'),
      match: fc.jsonValue({ maxDepth: 2 }),
      allow: fc.array(fc.record({ source: fc.string({ maxLength: 8 }) }), { maxLength: 2 }),
      issuer: fc.oneof(fc.webUrl(), fc.string({ maxLength: 10 })),
      secrets: fc.oneof(fc.constant(null), fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }))),
      scopes: fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }),
      id: fc.string({ maxLength: 8 }),
    },
    { requiredKeys: [] },
  ),
);
const ifMatch = fc.option(
  fc.oneof(fc.constantFrom('*', '"1"', 'W/"1"', '"a"', '"1", "2"'), fc.string({ maxLength: 10 })),
  {
    nil: undefined,
  },
);

describe('admin API under random input', () => {
  let f: AdminFixture;
  let operator: string;
  beforeAll(async () => {
    f = await startAdminFixture('pglite');
    operator = await f.operator();
    await f.seedSecretSource('beta');
  }, 120_000);
  afterAll(async () => f?.close());

  it('answers every request with a 2xx or a 4xx problem, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        tenant,
        name,
        body,
        ifMatch,
        async (route, tenantId, entity, json, tag) => {
          const path = route.path.replace('{tenantId}', tenantId || 'beta').replace('{name}', entity);
          const response = await fetch(`${f.base}/admin/v1${path}`, {
            method: route.method,
            headers: {
              authorization: `Bearer ${operator}`,
              ...(route.method === 'GET' ? {} : { 'content-type': 'application/json' }),
              ...(tag === undefined || !/^[\x20-\x7e]*$/.test(tag) ? {} : { 'if-match': tag }),
            },
            ...(route.method === 'GET' ? {} : { body: JSON.stringify(json) }),
          });
          const text = await response.text();
          const cause = () => f.logs.filter((line) => line.includes('admin API request failed')).at(-1);
          expect(response.status, `${route.method} ${path} ${JSON.stringify(json)}: ${text} ${cause()}`).toBeLessThan(
            500,
          );
          if (response.status >= 400) {
            expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            expectRegisteredProblem(JSON.parse(text), response.status, `${route.method} ${path}`);
          }
        },
      ),
      { numRuns: 600 },
    );
    await f.expectNoCredentialLeak();
  }, 120_000);
});
