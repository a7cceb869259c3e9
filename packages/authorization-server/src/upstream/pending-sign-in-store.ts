/**
 * What a started sign-in must remember until the provider sends the
 * browser back: the PKCE verifier (RFC 7636 section 4.1), the nonce (OpenID
 * Connect Core 1.0 section 3.1.2.1), the interaction it belongs to, and
 * where it was started (so a `state` cannot be finished at another
 * tenant's callback). Plain strings: any store can keep it as JSON.
 */
export interface PendingUpstreamSignIn {
  readonly interactionUid: string;
  readonly codeVerifier: string;
  readonly nonce: string;
  readonly upstreamIssuer: string;
  readonly redirectUri: string;
}

/**
 * The port pending sign-ins are kept in, keyed by their `state` (random,
 * 256 bits). Any replica may finish a sign-in another started, so the store
 * is shared (Redis or SQL). `take` returns the value and deletes it in one
 * step (a second `take` of the same key, on any replica, gets `undefined`),
 * so a callback cannot be replayed; an expired key is `undefined` too.
 */
export interface PendingSignInStore {
  put(key: string, value: PendingUpstreamSignIn, ttlSeconds: number): Promise<void>;
  take(key: string): Promise<PendingUpstreamSignIn | undefined>;
}

/** A started sign-in is finished within this long, or started again. */
export const PENDING_SIGN_IN_SECONDS = 600;

/** The stored value, if it has the shape this module wrote (a store holds bytes; a bad record is no record). */
export function pendingSignInOf(value: unknown): PendingUpstreamSignIn | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const fields = ['interactionUid', 'codeVerifier', 'nonce', 'upstreamIssuer', 'redirectUri'] as const;
  if (!fields.every((field) => typeof record[field] === 'string' && record[field] !== '')) return undefined;
  return record as unknown as PendingUpstreamSignIn;
}
