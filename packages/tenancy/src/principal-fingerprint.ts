import { createHmac } from 'node:crypto';
import type { Principal } from '@mcpgw/core';

/**
 * A function from a verified caller to a 12-character fingerprint: an HMAC
 * under `ServerKeys.requestLogFingerprint` (`@mcpgw/core`, from the server secret), so a log reader cannot test guesses of a
 * subject against it, yet the same caller gets the same fingerprint on
 * every replica that shares SECRETS_KEY. It is the same in every tenant (an
 * operator follows one caller across tenants with it), so it is never shown
 * to a tenant admin: see `createTenantPrincipalFingerprint`.
 */
export function createPrincipalFingerprint(key: Buffer): (principal: Principal) => string {
  // The verifier hands back the same Principal object for as long as it keeps
  // the token, so the HMAC is worked out once per verified token and dropped with it.
  const known = new WeakMap<Principal, string>();
  return (principal) => {
    let fingerprint = known.get(principal);
    if (fingerprint === undefined) {
      fingerprint = fingerprintUnder(key, principal);
      known.set(principal, fingerprint);
    }
    return fingerprint;
  };
}

/** Keys kept per tenant at most; past it they are derived again (a key is one HKDF away). */
const MAX_TENANT_KEYS = 10_000;

/**
 * The fingerprint of a caller within one tenant: what a tenant's admins are
 * shown ("preview as") and what the tenant's access lines carry as
 * `tenantPrincipal`. An HMAC under a key derived for the tenant from the
 * server secret (`ServerKeys.tenantPrincipalFingerprint`, `@mcpgw/core`), so the same caller
 * fingerprints differently in every tenant and differently from the
 * gateway-wide `principal`: an admin, who may compute it for any claims, can
 * only ever find their own tenant's lines with it.
 */
export function createTenantPrincipalFingerprint(
  tenantKey: (tenantId: string) => Buffer,
): (tenantId: string, principal: Principal) => string {
  // Per tenant: its key, and the fingerprints of the Principals its verifier holds (once per verified token,
  // dropped with it). A fingerprint alone per Principal, no record of the tenant beside it: the map is the tenant's.
  const tenants = new Map<string, { key: Buffer; known: WeakMap<Principal, string> }>();
  const tenantOf = (tenantId: string) => {
    let tenant = tenants.get(tenantId);
    if (tenant === undefined) {
      if (tenants.size >= MAX_TENANT_KEYS) tenants.clear();
      tenant = { key: tenantKey(tenantId), known: new WeakMap() };
      tenants.set(tenantId, tenant);
    }
    return tenant;
  };
  return (tenantId, principal) => {
    const tenant = tenantOf(tenantId);
    let fingerprint = tenant.known.get(principal);
    if (fingerprint === undefined) {
      fingerprint = fingerprintUnder(tenant.key, principal);
      tenant.known.set(principal, fingerprint);
    }
    return fingerprint;
  };
}

function fingerprintUnder(key: Buffer, principal: Principal): string {
  return createHmac('sha256', key).update(`${principal.issuer}\n${principal.subject}`).digest('base64url').slice(0, 12);
}
