/**
 * End to end (docs/admin-sign-in.md, docs/authorization-server.md "How it
 * fits with grants and admin role bindings"): a tenant whose hosted
 * authorization server signs people in at an Entra-like upstream, and whose
 * `adminSignIn` is at that hosted issuer. A person's browser (fetch with a
 * cookie jar) goes `GET …/login` → the hosted server → the upstream's
 * sign-in → consent when shown → the admin callback, and the session it ends
 * with reads the tenant through the admin API. The only admin role binding
 * names the hosted issuer and a group the hosted server maps from the
 * upstream's `groups` claim, so when the upstream user leaves that group, a
 * new sign-in ends in 403 `not-an-admin`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEntraLikeProvider, type EntraLikeProvider } from '@mcpgw/test-helpers/entra-like-provider';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';

const TENANT = 'acme';
const UPSTREAM_CLIENT = { clientId: 'mcp-gateway', clientSecret: 'an upstream client secret' };
const ADMIN_GROUP = 'gateway-admins';
const SECRET = 'an admin sign-in secret of at least thirty-two characters';

let upstream: EntraLikeProvider;
let gateway: StartedGateway;
let adminBase: string;
let hostedIssuer: string;

beforeAll(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  hostedIssuer = `${base}/t/${TENANT}/oauth`;
  adminBase = `${base}/admin/v1/tenants/${TENANT}`;
  upstream = await startEntraLikeProvider({
    clients: [{ ...UPSTREAM_CLIENT, redirectUris: [`${hostedIssuer}/callback`] }],
    user: { subject: 'alice-pairwise-sub', name: 'Alice Example', email: 'alice@example.com', groups: [ADMIN_GROUP] },
  });
  gateway = await startGateway({
    env: { PORT: String(port), SECRETS_KEY: SECRET },
    admin: {},
    bootstrap: {
      configDir: '.',
      document: {
        tenants: [
          {
            id: TENANT,
            name: 'Acme Corp',
            authorizationServer: {
              upstream: { issuer: upstream.issuer, ...UPSTREAM_CLIENT },
              claims: { groups: 'groups' },
            },
            auth: { issuers: [], requiredScopes: ['mcp:read'] },
            adminSignIn: { clientId: 'acme-admin', issuer: hostedIssuer, scopes: ['openid'] },
            adminRoleBindings: [{ name: 'entra-admins', issuer: hostedIssuer, groups: [ADMIN_GROUP] }],
            grants: [],
            sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'test://notes/a', name: 'a', text: 'a' }] }],
          },
        ],
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** One fresh browser's sign-in, from `GET login` to where the callback sends it; the gateway's cookies it was given. */
async function signIn(): Promise<{
  jar: Map<string, string>;
  walk: Promise<URL>;
  last: () => Response | undefined;
  pages: URL[];
}> {
  const jar = new Map<string, string>();
  const pages: URL[] = [];
  let last: Response | undefined;
  const recording = (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    if (new URL(String(input)).pathname.startsWith('/admin/')) {
      last = response.clone();
      for (const cookie of response.headers.getSetCookie()) {
        const pair = cookie.split(';', 1)[0] ?? '';
        const at = pair.indexOf('=');
        if (pair.slice(at + 1) === '') jar.delete(pair.slice(0, at));
        else jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
    }
    return response;
  }) as typeof fetch;
  const walk = followToRedirectUri(new URL(`${adminBase}/login`), `${adminBase}/session`, {
    fetch: recording,
    onPage: ({ url }) => pages.push(url),
  });
  return { jar, walk, last: () => last, pages };
}

const cookieHeader = (jar: Map<string, string>) => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');

describe("admin sign-in through the tenant's hosted authorization server", () => {
  it('signs an admin of the mapped group in, and the session reads the tenant', async () => {
    const { jar, walk, pages } = await signIn();
    const landed = await walk;
    // The one page a person answered: the hosted server's consent (the upstream signs the user in without one).
    expect(pages.map((page) => page.pathname)).toEqual([expect.stringMatching(/^\/t\/acme\/oauth\/interaction\//)]);
    expect(landed.pathname).toBe(`/admin/v1/tenants/${TENANT}/session`);

    const session = await fetch(`${adminBase}/session`, { headers: { cookie: cookieHeader(jar) } });
    expect(session.status).toBe(200);
    const body = (await session.json()) as { tenantId: string; principal: { issuer: string; subject: string } };
    expect(body.tenantId).toBe(TENANT);
    expect(body.principal).toMatchObject({ issuer: hostedIssuer, subject: 'alice-pairwise-sub' });

    const tenant = await fetch(adminBase, { headers: { cookie: cookieHeader(jar) } });
    expect(tenant.status).toBe(200);
    expect(((await tenant.json()) as { id: string }).id).toBe(TENANT);

    // The upstream saw the hosted server's request only: its client, its callback, no `resource`.
    expect(upstream.refusals).toEqual([]);
    expect(upstream.authorizationRequests.length).toBeGreaterThan(0);
    for (const asked of upstream.authorizationRequests) {
      expect(asked.get('client_id')).toBe(UPSTREAM_CLIENT.clientId);
      expect(asked.has('resource')).toBe(false);
    }
  }, 30_000);

  it('refuses a new sign-in with not-an-admin once the upstream user left the group', async () => {
    upstream.user = { ...upstream.user, groups: ['engineering'] };
    const { jar, walk, last } = await signIn();
    await expect(walk).rejects.toThrow(/stopped at 403/);
    const refused = last();
    expect(refused?.status).toBe(403);
    expect(new URL(refused?.url ?? 'http://x/').pathname).toBe(`/admin/v1/tenants/${TENANT}/callback`);
    expect(((await refused?.json()) as { code: string }).code).toBe('not-an-admin');
    expect([...jar.keys()].some((name) => name.endsWith('mcpgw-admin-session'))).toBe(false);
  }, 30_000);
});
