import { resolve } from 'node:path';
import type { EnvConfig, GatewayConfig, TenantConfig } from '@mcpgw/config';
import { isLoopbackHost } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import type { DevAuthorizationServer, DevClient, DevResource } from '@mcpgw/dev-authorization-server';
import { createDevAuthorizationServer } from '@mcpgw/dev-authorization-server';
import { operatorResource, tenantAdminResource } from '@mcpgw/admin';
import { publicBaseUrls, tenantResourceUri } from '@mcpgw/tenancy';

/**
 * Where the built-in development authorization server lives and keeps its
 * keys, shared by the gateway (which runs it) and `npm run token` (which signs
 * with the same keys without it).
 */
export function devAuthorizationServerIssuer(baseUrl: string): string {
  return `${baseUrl}/dev-idp`;
}

export function devKeystorePath(config: GatewayConfig): string {
  return resolve(config.env.DATA_DIR, 'dev-authorization-server', 'keys.json');
}

/** Whether a tenant's configuration trusts the development issuer. */
export function trustsDevAuthorizationServer(tenant: TenantConfig): boolean {
  return tenant.auth?.issuers.some((issuer) => 'development' in issuer) ?? false;
}

export function tenantsTrustingDevAuthorizationServer(config: GatewayConfig): TenantConfig[] {
  return config.tenants.filter(trustsDevAuthorizationServer);
}

/** The scopes a development token for a tenant carries: its required scopes and every scope a grant matches on. */
export function devTokenScopes(tenant: TenantConfig): string[] {
  return [
    ...new Set([...(tenant.auth?.requiredScopes ?? []), ...tenant.grants.flatMap((grant) => grant.match.scopes ?? [])]),
  ];
}

/**
 * What the development issuer of a configuration signs for: its issuer URL
 * (on the canonical base) and, per tenant that trusts it, the scopes and every
 * resource URI the tenant answers as (the canonical one first). The gateway
 * serves it; `npm run token` mints from it, or from the running gateway's copy.
 */
export interface DevTokenTarget {
  issuer: string;
  tenants: Record<
    string,
    {
      resources: string[];
      scopes: string[];
      /** The admin API resource and scopes of the tenant's browser sign-in, when it has one (`--admin`). */
      admin?: { resource: string; scopes: string[] };
    }
  >;
  /** What an operator token of the development issuer carries (`--operator`), when the gateway accepts one. */
  operator?: DevOperator;
}

/** The operator audience, and the role an operator token carries in which claim (a dotted path nests). */
export interface DevOperator {
  audience: string;
  roleClaim: string;
  role: string;
}

/**
 * Whether the development issuer is this gateway's local operator issuer: only
 * when no operator issuer is configured (OPERATOR_ISSUER set means the
 * operator's own identity provider issues operator tokens) and only on a
 * loopback bind, as the development server itself. Undefined otherwise.
 */
export function devOperator(env: EnvConfig, baseUrl: string): DevOperator | undefined {
  if (env.OPERATOR_ISSUER !== undefined || !isLoopbackHost(env.HOST)) return undefined;
  return {
    audience: env.OPERATOR_AUDIENCE ?? operatorResource(baseUrl),
    roleClaim: env.OPERATOR_ROLE_CLAIM,
    role: env.OPERATOR_ROLE,
  };
}

/** The development target of a configuration, or undefined when no tenant trusts the development issuer. */
export function devTokenTarget(config: GatewayConfig): DevTokenTarget | undefined {
  const trusting = tenantsTrustingDevAuthorizationServer(config);
  if (trusting.length === 0) return undefined;
  const bases = publicBaseUrls(config.env);
  const operator = devOperator(config.env, bases[0] as string);
  return {
    issuer: devAuthorizationServerIssuer(bases[0] as string),
    ...(operator === undefined ? {} : { operator }),
    tenants: Object.fromEntries(
      trusting.map((tenant) => {
        const admin = devAdminResource(bases[0] as string, tenant);
        return [
          tenant.id,
          {
            resources: bases.map((base) => tenantResourceUri(base, tenant.id)),
            scopes: devTokenScopes(tenant),
            ...(admin === undefined ? {} : { admin: { resource: admin.uri, scopes: admin.scopes } }),
          },
        ];
      }),
    ),
  };
}

/** OpenID Connect's own scopes: a sign-in asks for them, but no admin resource carries them. */
const OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access']);

/**
 * The admin API as a resource of a tenant's sign-in: its `resource` setting,
 * else the tenant's admin resource (`${base}/admin/v1/tenants/{id}`), granting the sign-in's scopes other than OpenID
 * Connect's (the demo admin's `mcpgw:admin`).
 */
function devAdminResource(base: string, tenant: TenantConfig): DevResource | undefined {
  if (tenant.adminSignIn === undefined) return undefined;
  return {
    uri: tenant.adminSignIn.resource ?? tenantAdminResource(base, tenant.id),
    scopes: tenant.adminSignIn.scopes.filter((scope) => !OIDC_SCOPES.has(scope)),
  };
}

/**
 * What the development issuer needs for the admin sign-in of the tenants
 * that trust it (docs/admin-sign-in.md): the admin API as a resource granting
 * the sign-in's non-OpenID scopes (the demo admin's `mcpgw:admin`), and each
 * tenant's sign-in client, public, with its callback under every base URL.
 */
export function devAdminSignIn(config: GatewayConfig): { resources: DevResource[]; clients: DevClient[] } {
  const bases = publicBaseUrls(config.env);
  const resources: DevResource[] = [];
  const clients: DevClient[] = [];
  for (const tenant of tenantsTrustingDevAuthorizationServer(config)) {
    const resource = devAdminResource(bases[0] as string, tenant);
    if (resource === undefined || tenant.adminSignIn === undefined) continue;
    resources.push(resource);
    clients.push({
      clientId: tenant.adminSignIn.clientId,
      redirectUris: bases.map((base) => `${base}/admin/v1/tenants/${tenant.id}/callback`),
    });
  }
  return { resources, clients };
}

/**
 * Starts the built-in development authorization server when a tenant trusts
 * it (configuration already refused it beside real issuers or off loopback).
 * Its signing keys persist under DATA_DIR so tokens survive restarts and
 * `npm run token` can sign without the server.
 */
export async function startDevAuthorizationServer(
  config: GatewayConfig,
  logger: Logger,
): Promise<DevAuthorizationServer | undefined> {
  const target = devTokenTarget(config);
  if (target === undefined) return undefined;
  const adminSignIn = devAdminSignIn(config);
  return createDevAuthorizationServer({
    issuer: target.issuer,
    keystorePath: devKeystorePath(config),
    resources: [
      ...Object.values(target.tenants).flatMap((tenant) =>
        tenant.resources.map((uri) => ({ uri, scopes: tenant.scopes })),
      ),
      ...adminSignIn.resources,
    ],
    clients: adminSignIn.clients,
    logger: logger.child({ component: 'dev-authorization-server' }),
  });
}
