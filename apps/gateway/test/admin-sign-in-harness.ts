import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { AuditEvent } from '@mcpgw/control-plane';
import type { Logger } from '@mcpgw/core';
import type { TenantAuthorizationServer } from '@mcpgw/authorization-server';
import { startStandaloneIssuer } from '@mcpgw/test-helpers/standalone-issuer';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';

/** The admin scope the tests' identity providers grant the signed-in admin. */
export const ADMIN_SCOPE = 'mcpgw:admin';
export const SECRET = 'a test SECRETS_KEY of at least thirty-two characters';

/** A logger for the identity providers the tests start: their logs are not under test. */
export const SILENT: Logger = (() => {
  const silent = { child: () => silent, debug() {}, info() {}, warn() {}, error() {} };
  return silent as unknown as Logger;
})();

/** A log stream that keeps the gateway's JSON lines in `lines`, for a test to scan. */
export function recordLines(lines: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
}

/** The role binding the tests' tenants grant their admins: whoever holds the admin scope for the tenant's admin resource. */
export const ADMIN_BINDING = { name: 'admins', scopes: [ADMIN_SCOPE] } as const;

/**
 * A state-changing request of the real admin API: creates (or replaces) the
 * grant `name` of `tenant`, allowing its `source`. Writes go to the control
 * plane and its audit log, where the tests check that a refused one left nothing.
 */
export function putGrant(
  baseUrl: string,
  tenant: string,
  name: string,
  headers: Record<string, string>,
  source = 'notes',
): Promise<Response> {
  return fetch(`${baseUrl}/admin/v1/tenants/${tenant}/grants/${name}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ match: { scopes: ['readers'] }, allow: [{ source }] }),
  });
}

/** The control plane's audit log of `tenant`, newest first: what every admin write leaves behind. */
export async function auditOf(app: FastifyInstance, tenant: string): Promise<AuditEvent[]> {
  return app.controlPlane!.store.auditEvents(tenant, { limit: 200 });
}

/** What a refused request must not change: the tenant's grants and audit log, as text. */
export async function stateOf(app: FastifyInstance, tenant: string): Promise<string> {
  const grants = await app.controlPlane!.store.listEntities(tenant, 'grant');
  return JSON.stringify({ grants, audit: await auditOf(app, tenant) });
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
): Promise<{ issuer: string; server: TenantAuthorizationServer; close(): Promise<void> }> {
  return startStandaloneIssuer({
    port,
    keystorePath: options.keystorePath,
    resources: options.adminResources,
    scopes: [ADMIN_SCOPE],
    clients: options.clients,
    logger: options.logger,
  });
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
