/**
 * End to end through the admin API as a person uses it (docs/admin-sign-in.md,
 * docs/admin-api.md): a tenant admin signs in from a browser through a local
 * OpenID Connect issuer (oidc-provider on its own port, trusted by discovery),
 * reads the CSRF token of the session, and with the session cookie adds a
 * source and a grant through replica 1; an MCP client (the official SDK)
 * connected to replica 2, which shares the Postgres control plane, sees the
 * listing change within 1 s, and the grant's deletion takes the resources
 * away again. The refusals: the same write without the CSRF token is a 403
 * that changes nothing, and tenant acme's session cookie on tenant globex's
 * admin routes gets the 404 of a tenant that does not exist, byte for byte.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '@mcpgw/core';
import { startStandaloneIssuer } from '@mcpgw/test-helpers/standalone-issuer';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { freePort } from '@mcpgw/test-helpers/free-port';
import type { StartedGateway } from '@mcpgw/test-helpers/gateway';
import { startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';

const ADMIN_SCOPE = 'mcpgw:admin';
const SECRET = 'an end-to-end admin secret of at least thirty-two characters';
const silent = { child: () => silent, debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;

let database: TestDatabase;
let dir: string;
let publicUrl: string;
let mcpIssuer: LocalIssuer;
let idp: { issuer: string; close(): Promise<void> };
const replicas: StartedGateway[] = [];
/**
 * The MCP client's own connection pool, destroyed before the replicas close: a
 * listen stream's aborted fetch can leave the pool a connection that never
 * sends a request, which a server's close would wait on until its headers timeout.
 */
const pool = new Agent();
const pooledFetch = ((url: string | URL, init?: RequestInit) =>
  undiciFetch(url, { ...(init as object), dispatcher: pool })) as unknown as typeof fetch;

const adminResource = (tenant: string) => `${publicUrl}/admin/v1/tenants/${tenant}`;

/** A local OpenID Connect issuer: the hosted authorization server's engine on a port of its own. */
async function startIdp(port: number, tenants: string[]): Promise<typeof idp> {
  return startStandaloneIssuer({
    port,
    keystorePath: join(dir, 'idp-keys.json'),
    resources: tenants.map(adminResource),
    scopes: [ADMIN_SCOPE],
    clients: tenants.map((tenant) => ({
      clientId: `${tenant}-admin`,
      redirectUris: [`${adminResource(tenant)}/callback`],
    })),
    logger: silent,
  });
}

/** The gateway's cookies as one browser keeps them. */
type Jar = Map<string, string>;
const cookieHeader = (jar: Jar) => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
function keep(jar: Jar, response: Response): void {
  for (const cookie of response.headers.getSetCookie()) {
    const pair = cookie.split(';', 1)[0] ?? '';
    const at = pair.indexOf('=');
    if (pair.slice(at + 1) === '' || /max-age=0/i.test(cookie)) jar.delete(pair.slice(0, at));
    else jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
}

/** A browser signing in to `tenant`'s admin on `replica`: login, the identity provider's redirects, the callback. */
async function signIn(replica: StartedGateway, tenant: string): Promise<Jar> {
  const jar: Jar = new Map();
  const login = await fetch(`${replica.baseUrl}/admin/v1/tenants/${tenant}/login`, { redirect: 'manual' });
  expect(login.status, await login.clone().text()).toBe(302);
  keep(jar, login);
  const reached = await followToRedirectUri(
    new URL(login.headers.get('location')!),
    `${adminResource(tenant)}/callback`,
  );
  const callback = await fetch(new URL(`${reached.pathname}${reached.search}`, replica.baseUrl), {
    redirect: 'manual',
    headers: { cookie: cookieHeader(jar) },
  });
  expect(callback.status, await callback.clone().text()).toBe(303);
  keep(jar, callback);
  return jar;
}

interface Answer {
  status: number;
  etag: string | null;
  text: string;
}

/** An admin API call as the browser's page makes it: the session cookie, and on writes the page's Origin. */
async function adminCall(
  replica: StartedGateway,
  jar: Jar,
  method: string,
  path: string,
  options: { body?: unknown; csrfToken?: string; ifMatch?: string } = {},
): Promise<Answer> {
  const response = await fetch(`${replica.baseUrl}/admin/v1${path}`, {
    method,
    headers: {
      cookie: cookieHeader(jar),
      ...(method === 'GET' ? {} : { origin: publicUrl }),
      ...(options.csrfToken === undefined ? {} : { 'x-csrf-token': options.csrfToken }),
      ...(options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch }),
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  return { status: response.status, etag: response.headers.get('etag'), text: await response.text() };
}

async function csrfTokenOf(replica: StartedGateway, jar: Jar, tenant: string): Promise<string> {
  const session = await adminCall(replica, jar, 'GET', `/tenants/${tenant}/session`);
  expect(session.status, session.text).toBe(200);
  const body = JSON.parse(session.text) as { csrfToken: string; principal: unknown };
  expect(body.principal).toMatchObject({ kind: 'tenant-admin', tenantId: tenant, via: 'session' });
  return body.csrfToken;
}

/** An MCP client (the official SDK) of tenant acme on `replica`, with a token of acme's MCP issuer. */
async function mcpClient(replica: StartedGateway): Promise<Client> {
  const token = await mcpIssuer.token({ sub: 'reader', aud: `${publicUrl}/t/acme/mcp`, scope: 'staff' });
  const transport = new StreamableHTTPClientTransport(new URL(`${replica.baseUrl}/t/acme/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    fetch: pooledFetch,
  });
  const client = new Client(
    { name: 'admin-e2e', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(transport);
  return client;
}

const names = async (client: Client) => (await client.listResources({})).resources.map((r) => r.name).sort();

beforeAll(async () => {
  database = await createTestDatabase('admin_browser_e2e');
  dir = await mkdtemp(join(tmpdir(), 'gw-admin-e2e-'));
  const [idpPort, first, second] = [await freePort(), await freePort(), await freePort()];
  // Both replicas behind one public URL, as behind a load balancer: tokens and callbacks name it.
  publicUrl = `http://127.0.0.1:${first}`;
  mcpIssuer = await startLocalIssuer({ path: '/mcp-idp' });
  idp = await startIdp(idpPort, ['acme', 'globex']);
  const tenant = (id: string) => ({
    id,
    auth: {
      issuers: [
        { issuer: idp.issuer, discovery: true },
        { issuer: mcpIssuer.issuer, jwksUri: mcpIssuer.jwksUri },
      ],
    },
    grants: [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'notes' }] }],
    sources: [{ id: 'notes', type: 'static', resources: [{ uri: `note://${id}/a`, name: 'a', text: 'A' }] }],
    adminSignIn: { clientId: `${id}-admin`, scopes: ['openid', ADMIN_SCOPE] },
    adminRoleBindings: [{ name: 'admins', scopes: [ADMIN_SCOPE] }],
  });
  const configPath = join(dir, 'gateway.json');
  await writeFile(configPath, JSON.stringify({ tenants: [tenant('acme'), tenant('globex')] }));
  for (const port of [first, second]) {
    replicas.push(
      await startGateway({
        configPath,
        admin: {},
        env: { PORT: String(port), PUBLIC_URL: publicUrl, DATABASE_URL: database.url, SECRETS_KEY: SECRET },
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  await pool.destroy();
  for (const replica of replicas) await replica.close();
  await idp?.close();
  await mcpIssuer?.close();
  await database?.drop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a tenant admin signed in from a browser', () => {
  it('adds a source and a grant on replica 1; an MCP client on replica 2 sees them before its cached listing expires, and loses them with the grant', async () => {
    const [one, two] = replicas as [StartedGateway, StartedGateway];
    const jar = await signIn(one, 'acme');
    const csrfToken = await csrfTokenOf(one, jar, 'acme');
    const client = await mcpClient(two);
    let changes = 0;
    client.setNotificationHandler('notifications/resources/list_changed', () => {
      changes += 1;
    });
    const listening = await client.listen({ resourcesListChanged: true });
    try {
      expect(await names(client)).toEqual(['a']);
      const source = await adminCall(one, jar, 'PUT', '/tenants/acme/sources/more', {
        csrfToken,
        body: { type: 'static', resources: [{ uri: 'note://acme/b', name: 'b', text: 'B' }] },
      });
      expect(source.status, source.text).toBe(201);
      const grant = await adminCall(one, jar, 'PUT', '/tenants/acme/grants/more-readers', {
        csrfToken,
        body: { match: { scopes: ['staff'] }, allow: [{ source: 'more' }] },
      });
      expect(grant.status, grant.text).toBe(201);
      // The client's listing is cached for the result's ttlMs (caching, "Time-to-Live"); the listen
      // stream's list_changed evicts it (subscriptions, "List Changed Notification"). Ten seconds
      // is far below the 60 s list ttl: only the eviction can show 'b' (latency: bench/listen-latency.ts).
      await within(10_000, async () => expect(await names(client)).toContain('b'), "'b' on replica 2");
      expect(changes).toBeGreaterThan(0);
      expect(await names(client)).toEqual(['a', 'b']);

      // The audit log names the signed-in person as the writer (read through the other replica).
      const audit = await adminCall(two, jar, 'GET', '/tenants/acme/audit?targetType=grant');
      expect(audit.status, audit.text).toBe(200);
      expect(audit.text).toContain('more-readers');

      const removed = await adminCall(one, jar, 'DELETE', '/tenants/acme/grants/more-readers', {
        csrfToken,
        ifMatch: grant.etag!,
      });
      expect(removed.status, removed.text).toBe(204);
      // Notifications of one stream are coalesced (LISTEN_LIST_CHANGED_INTERVAL_MS, 1 s): the removal may wait for the interval.
      await within(10_000, async () => expect(await names(client)).not.toContain('b'), "'b' gone on replica 2");
      expect(await names(client)).toEqual(['a']);
    } finally {
      await listening.close();
      await client.close();
    }
  });

  it('keeps a session signed in on replica 1 working on replica 2, and off the operator-only routes', async () => {
    const [one, two] = replicas as [StartedGateway, StartedGateway];
    const jar = await signIn(one, 'acme');
    const csrfToken = await csrfTokenOf(two, jar, 'acme');
    const flush = await adminCall(two, jar, 'POST', '/tenants/acme/cache/flush', { csrfToken });
    expect(flush.status, flush.text).toBe(204);
    const tenant = await adminCall(two, jar, 'GET', '/tenants/acme');
    expect(tenant.status, tenant.text).toBe(200);
    // Suspending is an operator's action: a tenant admin's session is refused, and the tenant keeps serving.
    const suspend = await adminCall(two, jar, 'POST', '/tenants/acme/suspend', { csrfToken });
    expect(suspend.status, suspend.text).toBe(403);
    expect((await adminCall(one, jar, 'GET', '/tenants/acme')).text).toContain('"status":"active"');
    const everyTenant = await adminCall(two, jar, 'GET', '/tenants');
    expect(everyTenant.status, everyTenant.text).toBe(401);
    // A session cookie that does not open (tampered) is no session: 401, on either replica.
    const tampered: Jar = new Map([...jar].map(([name, value]) => [name, `${value.slice(0, -4)}AAAA`]));
    for (const replica of [one, two]) {
      const refused = await adminCall(replica, tampered, 'GET', '/tenants/acme/sources');
      expect(refused.status, refused.text).toBe(401);
    }
  });

  it('is refused 403 for the same write without the CSRF token, and nothing changes', async () => {
    const [one, two] = replicas as [StartedGateway, StartedGateway];
    const jar = await signIn(one, 'acme');
    const before = await adminCall(one, jar, 'GET', '/tenants/acme/sources');
    expect(before.status, before.text).toBe(200);
    const write = await adminCall(one, jar, 'PUT', '/tenants/acme/sources/sneaky', {
      body: { type: 'static', resources: [{ uri: 'note://acme/x', name: 'x', text: 'X' }] },
    });
    expect(write.status, write.text).toBe(403);
    expect(JSON.parse(write.text)).toMatchObject({ status: 403, code: 'csrf-refused' });
    // A wrong token is no better than none.
    const forged = await adminCall(one, jar, 'PUT', '/tenants/acme/sources/sneaky', {
      csrfToken: 'not-the-session-token',
      body: { type: 'static', resources: [{ uri: 'note://acme/x', name: 'x', text: 'X' }] },
    });
    expect(forged.status, forged.text).toBe(403);
    for (const replica of [one, two]) {
      const after = await adminCall(replica, jar, 'GET', '/tenants/acme/sources');
      expect(after.text).toBe(before.text);
    }
    const audit = await adminCall(one, jar, 'GET', '/tenants/acme/audit?targetId=sneaky');
    expect(audit.status, audit.text).toBe(200);
    expect(audit.text).not.toContain('note://acme/x');
  });

  it("gets, with tenant acme's session cookie on tenant globex's admin routes, the 404 of a missing tenant", async () => {
    const [one] = replicas as [StartedGateway];
    const jar = await signIn(one, 'acme');
    const csrfToken = await csrfTokenOf(one, jar, 'acme');
    const probes: Array<[string, string, { body?: unknown; csrfToken?: string }]> = [
      ['GET', '/sources', {}],
      ['GET', '/status', {}],
      ['GET', '/session', {}],
      ['PUT', '/grants/stolen', { csrfToken, body: { match: {}, allow: [{ source: 'notes' }] } }],
      ['POST', '/cache/flush', { csrfToken }],
    ];
    for (const [method, suffix, options] of probes) {
      const foreign = await adminCall(one, jar, method, `/tenants/globex${suffix}`, options);
      const missing = await adminCall(one, jar, method, `/tenants/no-such-tenant${suffix}`, options);
      expect(foreign.status, `${method} ${suffix}: ${foreign.text}`).toBe(404);
      expect({ status: missing.status, text: missing.text }).toEqual({ status: 404, text: foreign.text });
    }
    // globex was not touched: a globex admin still sees only what its bootstrap declared.
    const globex = await signIn(one, 'globex');
    const grants = await adminCall(one, globex, 'GET', '/tenants/globex/grants');
    expect(grants.status, grants.text).toBe(200);
    expect(grants.text).not.toContain('stolen');
  });
});
