import { createHash } from 'node:crypto';

/**
 * Remembers which assertions were used, across every replica (implemented
 * over Redis or the control plane's SQL). `firstUse` must be atomic: of two
 * concurrent calls with one key, exactly one resolves true.
 */
export interface AssertionReplayStore {
  /** True the first time `key` is seen; the store keeps it at least `ttlSeconds`. */
  firstUse(key: string, ttlSeconds: number): Promise<boolean>;
}

/**
 * The replay key of an assertion: single use per (this authorization server,
 * assertion issuer, `jti`). The MCP enterprise-managed authorization
 * extension, section 7.4.2: the server "MUST implement replay detection by
 * rejecting re-use of the same `jti` for the lifetime of the assertion (at
 * minimum until `exp`), scoped appropriately (for example, by `iss`)". The
 * hosted issuer names the tenant, so one tenant's assertions never collide
 * with another's; hashed, so keys are bounded and carry no claim values.
 */
export function assertionReplayKey(hostedIssuer: string, assertionIssuer: string, jti: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([hostedIssuer, assertionIssuer, jti]))
    .digest('base64url');
  return `id-jag:${digest}`;
}
