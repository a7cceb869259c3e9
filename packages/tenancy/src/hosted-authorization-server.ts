import type { AuthorizationServerSettings, TenantConfig } from '@mcpgw/config';
import { authorizationServerSchema } from '@mcpgw/config';

/** What the development issuer stands for: the hosted server with the demo login and every default. */
const DEMO_LOGIN: AuthorizationServerSettings = authorizationServerSchema.parse({ upstream: { demo: true } });

/**
 * The tenant's hosted authorization server settings (docs/adr/0011): its
 * `authorizationServer`, else, for a tenant that trusts `{ "development": true }`,
 * the hosted server with the loopback-only demo login (configuration already
 * refused that issuer off loopback); undefined when it has none.
 */
export function hostedAuthorizationServerOf(tenant: TenantConfig): AuthorizationServerSettings | undefined {
  if (tenant.authorizationServer !== undefined) return tenant.authorizationServer;
  return tenant.auth?.issuers.some((issuer) => 'development' in issuer) === true ? DEMO_LOGIN : undefined;
}

/** A tenant's hosted issuer as its resource server trusts it: the issuer and its current public keys, inline. */
export interface HostedIssuer {
  readonly issuer: string;
  readonly publicJwks: { readonly keys: readonly object[] };
}
