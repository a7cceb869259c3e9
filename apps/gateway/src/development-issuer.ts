import { resolve } from 'node:path';
import type { GatewayConfig, TenantConfig } from '@mcpgw/config';

/**
 * Where the built-in development authorization server lives and keeps its
 * keys, shared by the gateway (which runs it) and `npm run token` (which signs
 * with the same keys without it).
 */
export function developmentIssuerUrl(baseUrl: string): string {
  return `${baseUrl}/dev-idp`;
}

export function developmentKeystorePath(config: GatewayConfig): string {
  return resolve(config.env.DATA_DIR, 'dev-authorization-server', 'keys.json');
}

/** Whether a tenant's configuration trusts the development issuer. */
export function trustsDevelopmentIssuer(tenant: TenantConfig): boolean {
  return tenant.auth?.issuers.some((issuer) => 'development' in issuer) ?? false;
}

export function tenantsTrustingDevelopmentIssuer(config: GatewayConfig): TenantConfig[] {
  return config.tenants.filter(trustsDevelopmentIssuer);
}

/** The scopes a development token for a tenant carries: its required scopes and every scope a grant matches on. */
export function developmentScopes(tenant: TenantConfig): string[] {
  return [
    ...new Set([...(tenant.auth?.requiredScopes ?? []), ...tenant.grants.flatMap((grant) => grant.match.scopes ?? [])]),
  ];
}
