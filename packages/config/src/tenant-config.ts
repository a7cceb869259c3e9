import type { AdminSignIn } from './admin-sign-in-schema.js';
import type { AuthorizationServerSettings } from './authorization-server-schema.js';
import type { GrantEntry, TenantAuth } from './auth-schema.js';
import type { TenantLimits } from './bootstrap-schema.js';

/** A source as the gateway runs it: its options already validated by its type. */
export interface SourceConfig {
  id: string;
  type: string;
  /** The output of the source type's options schema. */
  options: unknown;
  /** The entry's `ttlMs` overrides; absent keys keep the source's own. */
  ttlMs?: { list?: number; read?: number };
}

/** A tenant as the gateway runs it, from the bootstrap file or the control plane. */
export interface TenantConfig {
  id: string;
  name: string;
  /** No authentication at all (loopback development only); then `auth` is absent. */
  anonymous: boolean;
  auth?: TenantAuth | undefined;
  grants: GrantEntry[];
  sources: SourceConfig[];
  /** The tenant's own limits; absent keys take the gateway-wide defaults (env RATE_LIMIT_*, TENANT_MAX_IN_FLIGHT). */
  limits?: TenantLimits | undefined;
  /** How the tenant's admins sign in from a browser; absent: no browser sign-in. */
  adminSignIn?: AdminSignIn | undefined;
  /** The tenant's hosted authorization server; absent: clients use the tenant's own issuers only. */
  authorizationServer?: AuthorizationServerSettings | undefined;
}
