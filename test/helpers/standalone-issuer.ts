import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { authorizationServerSchema } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import type { StaticClient, TenantAuthorizationServer } from '@mcpgw/authorization-server';
import {
  createTenantAuthorizationServer,
  demoAutoConsent,
  findDemoAccount,
  loadOrCreateKeystore,
} from '@mcpgw/authorization-server';
// oidc-provider's own in-memory adapter (it exports no entry point for it): the tests' storage.
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import type { FindAccount } from 'oidc-provider';

/**
 * A local OpenID Connect issuer on a port of its own, for tests that need an
 * identity provider other than the gateway: the hosted authorization server's
 * engine (oidc-provider with the demo login, which consents automatically) at
 * `http://127.0.0.1:{port}/idp`, storing in oidc-provider's MemoryAdapter.
 */
export async function startStandaloneIssuer(options: {
  port: number;
  keystorePath: string;
  /** The resources it issues tokens for, each granting `scopes`. */
  resources: string[];
  scopes: string[];
  clients: StaticClient[];
  logger: Logger;
  /**
   * The demo user's `roles` claim, read at each token issue (so a test may
   * change it between sign-ins) and copied into its access tokens; absent:
   * no `roles` claim.
   */
  roles?: () => readonly string[] | undefined;
}): Promise<{ issuer: string; server: TenantAuthorizationServer; close(): Promise<void> }> {
  const mount = '/idp';
  const issuer = `http://127.0.0.1:${options.port}${mount}`;
  const server = await createTenantAuthorizationServer({
    tenantId: 'idp',
    issuer,
    resources: options.resources,
    scopes: options.scopes,
    settings: authorizationServerSchema.parse({
      upstream: { demo: true },
      ...(options.roles === undefined ? {} : { claims: { extra: { roles: 'roles' } } }),
    }),
    signingKeys: (await loadOrCreateKeystore(options.keystorePath)).privateJwks,
    adapter: (model) => new MemoryAdapter(model),
    findAccount: options.roles === undefined ? findDemoAccount : withRoles(options.roles),
    interactions: demoAutoConsent,
    cookieKeys: [randomBytes(32)],
    staticClients: options.clients,
    logger: options.logger,
  });
  const http = createServer((req, res) => {
    const url = req.url ?? '/';
    const path = url.split('?', 1)[0] ?? '';
    const query = url.slice(path.length);
    if (
      path === `/.well-known/oauth-authorization-server${mount}` ||
      path === `/.well-known/openid-configuration${mount}`
    ) {
      return server.handle({ kind: 'provider', url: `/.well-known/openid-configuration${query}` }, req, res);
    }
    if (path !== mount && !path.startsWith(`${mount}/`)) {
      res.statusCode = 404;
      return res.end();
    }
    const inner = path.slice(mount.length) || '/';
    const interaction = /^\/interaction\/([\w-]+)$/.exec(inner);
    if (interaction?.[1] !== undefined) return server.handle({ kind: 'interaction', uid: interaction[1] }, req, res);
    return server.handle({ kind: 'provider', url: `${inner}${query}` }, req, res);
  });
  await new Promise<void>((resolve) => http.listen(options.port, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    issuer: `http://127.0.0.1:${port}${mount}`,
    server,
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** The demo account, with `roles` among its claims when `roles()` gives any. */
function withRoles(roles: () => readonly string[] | undefined): FindAccount {
  return (ctx, id) => {
    const account = findDemoAccount(ctx, id);
    if (account === undefined) return undefined;
    return {
      ...account,
      claims: async (...args) => {
        const current = roles();
        const claims = await account.claims(...args);
        return current === undefined ? claims : { ...claims, roles: [...current] };
      },
    };
  };
}
