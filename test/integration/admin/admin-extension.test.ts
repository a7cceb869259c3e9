import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AdminAuthenticator, defineAdminRoute } from '@mcpgw/gateway/testing';
import { type AdminFixture, startAdminFixture } from './admin-fixture.js';

// How other modules extend the admin API: a route added through
// `admin.routes` is served behind the same access rules and documented; an
// authenticator added through `admin.authenticators` is asked after the
// bearer one, can resolve an access token into an admin principal itself
// (a browser session holding one), and can refuse with a status.

const hello = defineAdminRoute({
  method: 'POST',
  path: '/tenants/{tenantId}/hello',
  operationId: 'sayHello',
  summary: 'A route of another module',
  tag: 'Extension',
  access: 'tenant',
  params: z.strictObject({ tenantId: z.string() }),
  body: z.strictObject({ greeting: z.string().min(1) }),
  responses: { 200: { description: 'The greeting', schema: z.object({ said: z.string() }) } },
  async handler({ params, body, principal }) {
    return { status: 200, body: { said: `${body.greeting} ${params.tenantId} from ${principal?.via}` } };
  },
});

describe('extending the admin API', () => {
  let f: AdminFixture;
  beforeAll(async () => {
    f = await startAdminFixture('pglite', {
      routes: [hello],
      authenticators: (access): AdminAuthenticator[] => [
        {
          async authenticate(request) {
            const session = request.headers['x-test-session'];
            if (typeof session !== 'string') return undefined;
            if (request.headers['x-test-csrf'] !== 'ok') {
              throw Object.assign(new Error('The CSRF token is missing'), { statusCode: 403 });
            }
            const tenantId = (request.params as { tenantId?: string }).tenantId;
            return access.resolveAdminPrincipal(tenantId, session);
          },
        },
      ],
    });
  }, 120_000);
  afterAll(async () => f?.close());

  it('serves and documents an added route behind the tenant boundary', async () => {
    const token = await f.tenantAdmin('alpha');
    const ok = await f.call('POST', '/tenants/alpha/hello', { token, body: { greeting: 'hi' } });
    expect(ok.json).toEqual({ said: 'hi alpha from bearer' });
    const other = await f.call('POST', '/tenants/beta/hello', { token, body: { greeting: 'hi' } });
    const missing = await f.call('POST', '/tenants/no-such/hello', { token, body: { greeting: 'hi' } });
    expect([other.status, other.text]).toEqual([404, missing.text]);
    const bad = await f.call('POST', '/tenants/alpha/hello', { token, body: { greeting: '' } });
    expect(bad.json).toMatchObject({ status: 422, errors: [{ pointer: '/greeting' }] });
    const document = (await f.call('GET', '/openapi.json')).json as { paths: Record<string, Record<string, unknown>> };
    expect(document.paths['/tenants/{tenantId}/hello']?.post).toMatchObject({ operationId: 'sayHello' });
  });

  it('asks an added authenticator after the bearer one, with the token resolver', async () => {
    const session = await f.tenantAdmin('alpha');
    const viaSession = await f.call('POST', '/tenants/alpha/hello', {
      headers: { 'x-test-session': session, 'x-test-csrf': 'ok' },
      body: { greeting: 'hello' },
    });
    expect(viaSession.json).toEqual({ said: 'hello alpha from session' });
    const noCsrf = await f.call('POST', '/tenants/alpha/hello', {
      headers: { 'x-test-session': session },
      body: { greeting: 'hello' },
    });
    expect(noCsrf.json).toMatchObject({ status: 403, detail: 'The CSRF token is missing' });
    // A token the resolver does not accept: the authenticator answers "not mine", the caller is unauthenticated.
    const forged = await f.call('POST', '/tenants/alpha/hello', {
      headers: { 'x-test-session': 'not-a-token', 'x-test-csrf': 'ok' },
      body: { greeting: 'hello' },
    });
    expect(forged.status).toBe(401);
    expect(await f.gateway.app.adminAccess!.resolveAdminPrincipal('alpha', session)).toMatchObject({
      kind: 'tenant-admin',
      tenantId: 'alpha',
      via: 'session',
    });
  });
});
