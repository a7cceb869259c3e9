import { resolve } from 'node:path';
import type { EnvConfig, GatewayConfig, TenantConfig } from '@mcpgw/config';
import { isLoopbackHost } from '@mcpgw/config';
import type { ExtraResource, StaticClient } from '@mcpgw/authorization-server';
import { authorizationServerIssuer } from '@mcpgw/authorization-server';
import { operatorResource, tenantAdminResource } from '@mcpgw/admin';
import { hostedAuthorizationServerOf, publicBaseUrls, tenantResourceUri } from '@mcpgw/tenancy';

/**
 * The loopback issuers `npm start` runs and `npm run token` signs for without
 * a browser: each demo-login tenant's hosted issuer (`${base}/t/{tenant}/oauth`)
 * and the local operator issuer. Their keys are keystore files under DATA_DIR,
 * shared by the gateway (which serves and trusts them) and the token command
 * (which signs with them while the gateway runs or not).
 */

/** The local operator issuer's identifier: it only names the operator tokens `npm run token -- --operator` signs. */
export function localOperatorIssuer(baseUrl: string): string {
  return `${baseUrl}/local-operator`;
}

export function localOperatorKeystorePath(config: GatewayConfig): string {
  return resolve(config.env.DATA_DIR, 'local-operator', 'keys.json');
}

/**
 * The keystore file of a demo-login tenant's hosted server: the gateway signs
 * with it and `npm run token` too, which cannot open the embedded database
 * the running gateway holds. Every other tenant's keys are in the control plane.
 */
export function tenantKeystorePath(config: GatewayConfig, tenantId: string): string {
  return resolve(config.env.DATA_DIR, 'authorization-server', tenantId, 'keys.json');
}

/** Whether a tenant's hosted server signs in with the demo login (what `{ "development": true }` stands for). */
export function usesDemoLogin(tenant: TenantConfig): boolean {
  const settings = hostedAuthorizationServerOf(tenant);
  return settings !== undefined && 'demo' in settings.upstream;
}

/** The scopes a minted token for a tenant carries: its required scopes and every scope a grant matches on. */
export function demoTokenScopes(tenant: TenantConfig): string[] {
  return [
    ...new Set([...(tenant.auth?.requiredScopes ?? []), ...tenant.grants.flatMap((grant) => grant.match.scopes ?? [])]),
  ];
}

/**
 * What `npm run token` mints for: per demo-login tenant, its hosted issuer
 * (on the canonical base), every resource URI the tenant answers as (the
 * canonical one first), its scopes and token lifetime; and the local operator
 * issuer when the gateway takes one. The gateway records it while it runs.
 */
export interface TokenTarget {
  tenants: Record<
    string,
    {
      issuer: string;
      resources: string[];
      scopes: string[];
      /** The tenant's access-token lifetime (authorizationServer.tokens.accessTokenSeconds). */
      ttlSeconds: number;
      /** The admin API resource and scopes of the tenant's browser sign-in, when it has one (`--admin`). */
      admin?: { resource: string; scopes: string[] };
    }
  >;
  /** What an operator token carries (`--operator`), when the gateway accepts local operator tokens. */
  operator?: LocalOperator;
}

/** The local operator issuer, the operator audience, and the role an operator token carries in which claim (a dotted path nests). */
export interface LocalOperator {
  issuer: string;
  audience: string;
  roleClaim: string;
  role: string;
}

/**
 * The local operator issuer, when this gateway takes one: only with no
 * OPERATOR_ISSUER (then the operator's own identity provider issues operator
 * tokens), only on a loopback bind, and only beside a demo login, as the old
 * development server. Undefined otherwise.
 */
export function localOperator(config: GatewayConfig, baseUrl: string): LocalOperator | undefined {
  const { env } = config;
  if (!takesLocalOperator(env) || !config.tenants.some(usesDemoLogin)) return undefined;
  return {
    issuer: localOperatorIssuer(baseUrl),
    audience: env.OPERATOR_AUDIENCE ?? operatorResource(baseUrl),
    roleClaim: env.OPERATOR_ROLE_CLAIM,
    role: env.OPERATOR_ROLE,
  };
}

function takesLocalOperator(env: EnvConfig): boolean {
  return env.OPERATOR_ISSUER === undefined && isLoopbackHost(env.HOST);
}

/** The token target of a configuration, or undefined when no tenant signs in with the demo login. */
export function tokenTarget(config: GatewayConfig): TokenTarget | undefined {
  const demo = config.tenants.filter(usesDemoLogin);
  if (demo.length === 0) return undefined;
  const bases = publicBaseUrls(config.env);
  const base = bases[0] as string;
  const operator = localOperator(config, base);
  return {
    ...(operator === undefined ? {} : { operator }),
    tenants: Object.fromEntries(
      demo.map((tenant) => {
        const admin = adminSignInResource(base, tenant);
        return [
          tenant.id,
          {
            issuer: authorizationServerIssuer(base, tenant.id),
            resources: bases.map((each) => tenantResourceUri(each, tenant.id)),
            scopes: demoTokenScopes(tenant),
            ttlSeconds: hostedAuthorizationServerOf(tenant)?.tokens.accessTokenSeconds ?? 900,
            ...(admin === undefined ? {} : { admin: { resource: admin.uri, scopes: [...admin.scopes] } }),
          },
        ];
      }),
    ),
  };
}

/** OpenID Connect's own scopes: a sign-in asks for them, but no admin resource carries them. */
const OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access']);

/**
 * The tenant's admin API as a resource of its hosted server, when its admins
 * sign in there (docs/admin-sign-in.md: `adminSignIn.issuer` unset and the
 * first issuer the development one, or set to the hosted issuer): its
 * `resource` setting, else `${base}/admin/v1/tenants/{id}`, granting the
 * sign-in's scopes other than OpenID Connect's (the demo admin's `mcpgw:admin`).
 */
function adminSignInResource(base: string, tenant: TenantConfig): ExtraResource | undefined {
  const signIn = tenant.adminSignIn;
  if (signIn === undefined || hostedAuthorizationServerOf(tenant) === undefined) return undefined;
  const first = tenant.auth?.issuers[0];
  const atHosted =
    signIn.issuer === undefined
      ? first !== undefined && 'development' in first
      : signIn.issuer === authorizationServerIssuer(base, tenant.id);
  if (!atHosted) return undefined;
  return {
    uri: signIn.resource ?? tenantAdminResource(base, tenant.id),
    scopes: signIn.scopes.filter((scope) => !OIDC_SCOPES.has(scope)),
  };
}

/**
 * What a tenant's hosted server needs for its admins' browser sign-in: the
 * admin API as a resource, and the sign-in's client, public, with its
 * callback under every base URL. Nothing when they sign in elsewhere.
 */
export function adminSignInAtHostedServer(
  bases: readonly string[],
  tenant: TenantConfig,
): { resources: ExtraResource[]; clients: StaticClient[] } {
  const resource = adminSignInResource(bases[0] as string, tenant);
  if (resource === undefined || tenant.adminSignIn === undefined) return { resources: [], clients: [] };
  return {
    resources: [resource],
    clients: [
      {
        clientId: tenant.adminSignIn.clientId,
        redirectUris: bases.map((base) => `${base}/admin/v1/tenants/${tenant.id}/callback`),
      },
    ],
  };
}
