import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createTokenVerifier } from '@mcpgw/auth';
import type { Logger } from '@mcpgw/core';
import type { DevAuthorizationServer } from '@mcpgw/dev-authorization-server';
import { createDevAuthorizationServer } from '@mcpgw/dev-authorization-server';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import type { AdminPrincipal } from '../src/admin/admin-principal.js';
import type { AdminSignInPlugin, ResolveAdmin } from '../src/admin/sign-in/admin-sign-in.js';
import { createAdminSignIn } from '../src/admin/sign-in/admin-sign-in.js';
import { createBaseUrlResolver } from '../src/public-url.js';

/** The admin scope the tests' identity providers grant the signed-in admin. */
export const ADMIN_SCOPE = 'mcpgw:admin';
export const SECRET = 'a test SECRETS_KEY of at least thirty-two characters';

/** The admin API resource of a tenant, the sign-in's default `resource` (docs/admin-sign-in.md). */
export const tenantAdminResource = (baseUrl: string, tenantId: string): string =>
  `${baseUrl}/admin/v1/tenants/${tenantId}`;

/**
 * A real admin resolver standing in for the admin API's: the access token is
 * verified by packages/auth against the issuer's discovered JWKS (issuer,
 * audience = one of the tenants' admin resources, expiry, `typ` at+jwt), then
 * must carry the admin scope. The admin API's own resolver (tested through the
 * app in test/integration/admin) also ties the audience to the tenant.
 */
export function scopeResolver(issuer: string, adminResources: readonly string[], logger: Logger): ResolveAdmin {
  const verifier = createTokenVerifier({
    resource: adminResources[0] as string,
    issuers: [
      {
        issuer,
        keys: { discovery: true },
        algorithms: ['RS256', 'ES256', 'PS256', 'EdDSA'],
        audiences: adminResources.slice(1),
        tokenTypes: ['at+jwt'],
        scopeClaim: 'scope',
        clockToleranceSeconds: 30,
      },
    ],
    logger,
  });
  return async (tenantId, accessToken) => {
    try {
      const principal = await verifier.verify(accessToken, AbortSignal.timeout(5_000));
      if (!principal.scopes.includes(ADMIN_SCOPE)) return undefined;
      return { kind: 'tenant-admin', tenantId, issuer: principal.issuer, subject: principal.subject, via: 'bearer' };
    } catch {
      return undefined;
    }
  };
}

/** What the stand-in admin route recorded: one entry per admitted write. */
export interface Writes {
  entries: Array<{ tenantId: string; principal: AdminPrincipal }>;
}

/**
 * Wires the sign-in into a built test app as the admin API will: its routes,
 * and in place of the admin API's resources (not part of the sign-in) one
 * state-changing route, `POST /admin/v1/tenants/:tenantId/probe`, behind the
 * CSRF guard, authenticated by the session then by bearer token, recording
 * what it admits.
 */
/** The stand-in admin API's answer for a tenant that does not exist; the sign-in is told to answer the same. */
export function adminTenantNotFound(): Error & { statusCode: number; problem: object } {
  return Object.assign(new Error('no such tenant'), {
    statusCode: 404,
    problem: { type: 'about:blank', title: 'Not Found', status: 404, detail: 'No tenant by that id.' },
  });
}

export async function wireSignIn(
  built: TestApp,
  /** The canonical base URL: PUBLIC_URL when set. */
  baseUrl: string,
  resolveAdmin: ResolveAdmin,
  devIssuer?: string,
): Promise<{ signIn: AdminSignInPlugin; writes: Writes }> {
  const { app, config } = built;
  const signIn = createAdminSignIn({
    tenants: app.tenants.serving,
    publicBaseUrl: baseUrl,
    baseUrlOf: createBaseUrlResolver(config.env),
    secrets: [Buffer.from(SECRET, 'utf8')],
    resolveAdmin,
    devIssuer,
    tenantNotFound: adminTenantNotFound,
  });
  await signIn.register(app);
  const writes: Writes = { entries: [] };
  const bearer = async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    const tenantId = (request.params as { tenantId: string }).tenantId;
    return header?.startsWith('Bearer ') === true ? resolveAdmin(tenantId, header.slice(7)) : undefined;
  };
  await app.register(async (scope: FastifyInstance) => {
    scope.addHook('onRequest', signIn.session.csrfGuard);
    scope.post('/admin/v1/tenants/:tenantId/probe', async (request, reply) => {
      const { tenantId } = request.params as { tenantId: string };
      const refuse = (refusal: { statusCode: number; problem: unknown }) =>
        reply.code(refusal.statusCode).type('application/problem+json').send(refusal.problem);
      let principal: AdminPrincipal | undefined;
      try {
        principal = (await signIn.session.authenticator.authenticate(request)) ?? (await bearer(request));
      } catch (error) {
        return refuse(error as { statusCode: number; problem: unknown });
      }
      if (principal === undefined) return reply.code(401).send({ title: 'Unauthorized' });
      // As the admin API: a tenant admin of another tenant, or a missing tenant, gets the same 404.
      const foreign = principal.kind === 'tenant-admin' && principal.tenantId !== tenantId;
      if (foreign || !app.tenants.serving.has(tenantId)) return refuse(adminTenantNotFound());
      writes.entries.push({ tenantId, principal });
      return reply.code(204).send();
    });
  });
  return { signIn, writes };
}

/** A second, independent OpenID Connect issuer (oidc-provider) on a port of its own. */
export async function startSecondIssuer(
  port: number,
  options: {
    keystorePath: string;
    adminResources: string[];
    clients: Array<{ clientId: string; clientSecret?: string; redirectUris: string[] }>;
    logger: Logger;
  },
): Promise<{ issuer: string; server: DevAuthorizationServer; close(): Promise<void> }> {
  const server = await createDevAuthorizationServer({
    issuer: `http://127.0.0.1:${port}/idp`,
    keystorePath: options.keystorePath,
    resources: options.adminResources.map((uri) => ({ uri, scopes: [ADMIN_SCOPE] })),
    clients: options.clients,
    logger: options.logger,
  });
  const http = createServer((req, res) => server.handler(req, res));
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const address = http.address() as AddressInfo;
  return {
    issuer: `http://127.0.0.1:${address.port}/idp`,
    server,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await server.close();
    },
  };
}

/** The gateway's cookies as a browser keeps them for one origin, by name (the tests keep one tenant per jar). */
export type Jar = Map<string, string>;

export function cookieHeader(jar: Jar): string {
  return [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
}

/** Stores a response's Set-Cookie headers into the jar (a cleared cookie is removed) and returns them raw. */
export function store(jar: Jar, response: Response): string[] {
  const raw = response.headers.getSetCookie();
  for (const cookie of raw) {
    const pair = cookie.split(';', 1)[0] ?? '';
    const at = pair.indexOf('=');
    const expired = /max-age=0|expires=thu, 01 jan 1970/i.test(cookie);
    if (pair.slice(at + 1) === '' || expired) jar.delete(pair.slice(0, at));
    else jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return raw;
}

/**
 * A browser signing in without pixels: opens the tenant's login URL, follows
 * the identity provider's redirects (its own cookie jar, automatic consent)
 * to the callback, and hands `editCallback` the callback URL before opening
 * it with the gateway's cookies. Returns the callback's response.
 */
export async function signInThroughBrowser(
  baseUrl: string,
  tenantId: string,
  jar: Jar,
  editCallback: (callback: URL) => URL = (url) => url,
  /** The gateway's PUBLIC_URL when it differs from where the test reaches it (https in front of plain http). */
  publicUrl: string = baseUrl,
): Promise<{ login: Response; loginCookies: string[]; callback: Response; callbackCookies: string[] }> {
  const login = await fetch(`${baseUrl}/admin/v1/tenants/${tenantId}/login`, { redirect: 'manual' });
  const loginCookies = store(jar, login);
  const authorize = login.headers.get('location');
  if (login.status !== 302 || authorize === null) {
    throw new Error(`login answered ${login.status}: ${await login.text()}`);
  }
  const reached = await followToRedirectUri(new URL(authorize), `${publicUrl}/admin/v1/tenants/${tenantId}/callback`);
  // As a TLS-terminating proxy would: the browser's https request reaches the gateway as http.
  const direct = new URL(`${reached.pathname}${reached.search}`, baseUrl);
  const callback = await fetch(editCallback(direct), { redirect: 'manual', headers: { cookie: cookieHeader(jar) } });
  const callbackCookies = store(jar, callback);
  return { login, loginCookies, callback, callbackCookies };
}
