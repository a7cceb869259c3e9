import type { Catalog } from '@mcpgw/catalog';
import type { TenantConfig } from '@mcpgw/config';
import type { AccessScope, Principal } from '@mcpgw/core';
import type { CompiledGrants } from '@mcpgw/policy';

/*
 * What the admin domain needs of the tenancy: small interfaces that the
 * tenant runtime and registry satisfy as they are, so this package depends
 * on no implementation of them (and the tenancy may depend on this one).
 */

/** What a verified principal may do: its resource set, or the required scopes it lacks. */
export type TenantAdmission = { ok: true; scope: AccessScope } | { ok: false; missingScopes: readonly string[] };

/** A request's authentication as the MCP route sees it; `principal` on a refusal is a verified caller short of scopes. */
export type TenantAuthOutcome = { ok: true; principal: Principal } | { ok: false; error: Error; principal?: Principal };

/** The tenant's authenticator, as the preview drives it (the MCP route's own calls). */
export interface TenantAuth {
  /** The tenant's grants as compiled at load (the ones `admit` resolves against). */
  readonly grants: CompiledGrants;
  authenticate(
    request: { rawHeaders: readonly string[]; url: string },
    signal: AbortSignal,
  ): Promise<TenantAuthOutcome>;
  /** The step after verification: required scopes, then the resource set from the grants. */
  admit(principal: Principal): TenantAdmission;
  /** The principal a verified token with these claims would give; throws AuthError for claims or an issuer it refuses. */
  principalFromClaims(claims: Readonly<Record<string, unknown>>, issuer?: string): Principal;
}

/** A tenant's serving runtime: its configuration, the revision it was built from, its catalog and authenticator. */
export interface TenantRuntimeView {
  readonly config: TenantConfig;
  readonly revision: number;
  readonly catalog: Catalog;
  readonly auth: TenantAuth | undefined;
}

/** A runtime held until released, so a configuration swap lets the work finish on it. */
export interface TenantRuntimeLease<R> {
  readonly runtime: R;
  release(): void;
}

/** The serving runtimes by tenant id. */
export interface ServingTenants<R> {
  readonly serving: { get(tenantId: string): R | undefined };
}
