import type { ClaimMapping } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import { UpstreamLoginError, type UpstreamLogin } from '../interactions/upstream-login.js';
import { mapUpstreamClaims } from '../upstream/claim-mapping.js';
import type { PendingSignInStore, PendingUpstreamSignIn } from '../upstream/pending-sign-in-store.js';
import type { UpstreamSignIn } from '../upstream/upstream-sign-in.js';
import { UpstreamSignInError, type UpstreamSignInErrorCode } from '../upstream/upstream-sign-in-error.js';
import { rememberAccount, type AccountClaimsStore } from './account-records.js';

/**
 * The OAuth error each failed upstream sign-in is reported as, on the error
 * page and (when the interaction is known) to the client: a refusal at the
 * upstream or a sign-in with nobody in it is `access_denied` (RFC 6749
 * section 4.1.2.1); an upstream that does not answer is
 * `temporarily_unavailable`; an answer that does not check out is the
 * server's `server_error`; an unknown `state` is a stale request.
 */
const LOGIN_ERROR: Record<UpstreamSignInErrorCode, string> = {
  upstream_refused: 'access_denied',
  subject_missing: 'access_denied',
  upstream_unreachable: 'temporarily_unavailable',
  upstream_misconfigured: 'server_error',
  id_token_invalid: 'server_error',
  sign_in_expired: 'invalid_request',
};

export interface UpstreamLoginAdapterOptions {
  readonly tenantId: string;
  /** Makes the sign-in: createUpstreamSignIn over `pending` (the same store, see {@link watchedPendingStore}). */
  readonly signIn: (pending: PendingSignInStore) => UpstreamSignIn;
  readonly pending: PendingSignInStore;
  readonly claims: ClaimMapping;
  readonly accounts: AccountClaimsStore;
  readonly logger: Logger;
}

/**
 * The pages' UpstreamLogin port over the upstream module: `start` begins the
 * OpenID Connect sign-in; `finish` completes it, maps the verified claims
 * with the tenant's mapping and stores them for the account (so tokens and
 * refreshes carry them), and names the interaction to resume. Every
 * UpstreamSignInError becomes an UpstreamLoginError carrying the public
 * message only (the detail goes to the log), with the interaction when the
 * callback's `state` named one, so the client hears `access_denied` too.
 */
export function createUpstreamLogin(options: UpstreamLoginAdapterOptions): UpstreamLogin {
  const { tenantId, accounts, logger } = options;
  // The interaction of each state taken, so a sign-in failing after its state was used still names it.
  const taken = new Map<string, string>();
  const pending: PendingSignInStore = {
    put: (key, value, ttl) => options.pending.put(key, value, ttl),
    async take(key) {
      const value: PendingUpstreamSignIn | undefined = await options.pending.take(key);
      if (value !== undefined && typeof value.interactionUid === 'string') taken.set(key, value.interactionUid);
      return value;
    },
  };
  const signIn = options.signIn(pending);

  const converted = (error: unknown, interactionUid?: string): unknown => {
    if (!(error instanceof UpstreamSignInError)) return error;
    logger.info({ code: error.code, detail: error.detail }, 'authorization server: upstream sign-in failed');
    return new UpstreamLoginError({
      error: LOGIN_ERROR[error.code],
      description: error.message,
      reason: error.code,
      ...(interactionUid === undefined ? {} : { interactionUid }),
      cause: error,
    });
  };

  return {
    async start({ interactionUid }) {
      try {
        return await signIn.start(interactionUid);
      } catch (error) {
        throw converted(error, interactionUid);
      }
    },
    async finish(query) {
      const state = query.get('state') ?? '';
      try {
        const identity = await signIn.finish(query);
        const mapped = mapUpstreamClaims(options.claims, identity);
        if (mapped.dropped.length > 0) {
          logger.info({ dropped: mapped.dropped }, 'authorization server: claims left out of the tokens');
        }
        await rememberAccount(accounts, tenantId, mapped);
        return { interactionUid: identity.interactionUid, accountId: mapped.accountId };
      } catch (error) {
        throw converted(error, taken.get(state));
      } finally {
        taken.delete(state);
      }
    },
  };
}
