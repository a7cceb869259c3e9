import type { Logger, Principal } from '@mcpgw/core';
import type { IssuerKeySet } from './jwks-cache.js';
import type { IssuerSettings } from './issuer-settings.js';
import type { VerifierObserver } from './verifier-observer.js';

/** One configured issuer, ready to verify with. */
export interface TrustedIssuer {
  readonly settings: IssuerSettings;
  /** Absent for an issuer used through introspection only. */
  readonly keys: IssuerKeySet | undefined;
  /** The tenant's canonical resource URI first, then the issuer's extra audiences. */
  readonly audiences: readonly string[];
}

/** What the verification steps share within one verifier (one tenant). */
export interface VerificationContext {
  /** Exact `iss` → issuer: the only way a token picks its keys. */
  readonly issuers: ReadonlyMap<string, TrustedIssuer>;
  /** The one issuer that introspects opaque tokens, if any. */
  readonly introspecting: TrustedIssuer | undefined;
  readonly fetch: typeof fetch;
  readonly now: () => number;
  readonly logger: Logger;
  readonly closed: AbortSignal;
  readonly observer: VerifierObserver | undefined;
}

/** A verified token: who, and until when (ms) the answer may be reused. */
export interface Verified {
  readonly principal: Principal;
  readonly cacheUntil: number;
}

/** True when an `aud` value (string or array) names one of the accepted audiences. */
export function audienceMatches(aud: unknown, accepted: readonly string[]): boolean {
  if (typeof aud === 'string') return accepted.includes(aud);
  return Array.isArray(aud) && aud.some((value) => typeof value === 'string' && accepted.includes(value));
}
