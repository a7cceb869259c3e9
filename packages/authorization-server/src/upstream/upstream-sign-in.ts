import { egressFetch } from '@mcpgw/auth';
import type { ClaimMapping, UpstreamSettings } from '@mcpgw/config';
import type { EgressGuard } from '@mcpgw/core';
import {
  authorizationRequestUrl,
  describe,
  oauthErrorCode,
  redeemAuthorizationCode,
} from './authorization-code-client.js';
import { claimAt, mappedClaimPaths } from './claim-mapping.js';
import { cachedUpstreamEndpoints } from './openid-discovery.js';
import {
  PENDING_SIGN_IN_SECONDS,
  pendingSignInOf,
  type PendingSignInStore,
  type PendingUpstreamSignIn,
} from './pending-sign-in-store.js';
import { randomToken } from './pkce.js';
import { cachedUpstreamKeys } from './upstream-keys.js';
import { UpstreamSignInError } from './upstream-sign-in-error.js';
import { fetchUserInfo } from './userinfo.js';
import { verifyIdToken } from './verify-id-token.js';

/** An upstream that is an OpenID Connect provider (the demo login is handled apart). */
export type OpenIdUpstreamSettings = Exclude<UpstreamSettings, { demo: true }>;

export interface UpstreamSignInOptions {
  readonly upstream: OpenIdUpstreamSettings;
  /** Where the provider sends the browser back: `${issuer}/callback` of the hosted server, registered at the provider. */
  readonly redirectUri: string;
  readonly pending: PendingSignInStore;
  /**
   * The tenant's claim mapping: when a claim it reads is not in the ID token
   * and the provider has a userinfo endpoint, the userinfo claims are read
   * too. Absent: the ID token's claims alone.
   */
  readonly claims?: ClaimMapping | undefined;
  /** Default: the global fetch. */
  readonly fetch?: typeof fetch | undefined;
  /**
   * Present when a tenant admin wrote the upstream: every request to it
   * (discovery, keys, token, userinfo) connects only where the egress policy
   * allows, so a loopback or private address is refused unless an operator
   * allowed it in EGRESS_ALLOW (as for issuers' discovery and key fetches).
   * Absent (an operator's upstream, the development setup): `fetch` as is.
   */
  readonly egress?: EgressGuard | undefined;
  /** The clock (ms); tests move it. */
  readonly now?: (() => number) | undefined;
}

/** Who signed in at the upstream. */
export interface UpstreamIdentity {
  /** The oidc-provider interaction the sign-in was started for. */
  readonly interactionUid: string;
  readonly upstreamIssuer: string;
  /**
   * The verified ID token's claims, merged over the userinfo claims when
   * they were read (the signed ID token wins where both have a claim).
   * Input for {@link mapUpstreamClaims}, not for tokens as they stand.
   */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** One tenant's sign-in at its upstream; keep it as long as the tenant's settings (it caches discovery and keys). */
export interface UpstreamSignIn {
  /**
   * Starts a sign-in for an interaction: remembers a fresh `state`, PKCE
   * verifier and `nonce` in the pending store and returns the upstream's
   * authorization URL to redirect the browser to. Only the gateway's own
   * client, redirect URI and scopes go into it: nothing of the connector's
   * request (its client, `resource`, scopes) reaches the upstream.
   * Rejects with {@link UpstreamSignInError} when the provider's
   * configuration cannot be read.
   */
  start(interactionUid: string): Promise<string>;
  /**
   * Finishes a sign-in on the callback's query: takes the pending sign-in of
   * its `state` (single use), redeems the code and verifies the ID token.
   * `interactionUid`, when given (the interaction of the browser's cookie),
   * must be the one the sign-in was started for, which binds the `state`
   * to the browser that started it. Rejects with {@link UpstreamSignInError}.
   */
  finish(callback: URLSearchParams, expect?: { readonly interactionUid?: string }): Promise<UpstreamIdentity>;
}

/**
 * The OpenID Connect authorization code flow (Core 1.0 section 3.1) of the
 * gateway at a tenant's identity provider, with PKCE S256 (RFC 7636), `state`
 * (RFC 6749 section 10.12) and `nonce` (section 3.1.2.1). The gateway is the
 * provider's one client (`upstream.clientId`), confidential with
 * `client_secret_basic` when a secret is set, public otherwise.
 */
export function createUpstreamSignIn(options: UpstreamSignInOptions): UpstreamSignIn {
  const { upstream, redirectUri, pending } = options;
  const now = options.now ?? Date.now;
  const fetcher = options.egress === undefined ? (options.fetch ?? fetch) : egressFetch(options.egress);
  const endpoints = cachedUpstreamEndpoints(upstream, fetcher, now);
  const keys = cachedUpstreamKeys(fetcher, now);
  const client = { clientId: upstream.clientId, clientSecret: upstream.clientSecret };
  const wanted = options.claims === undefined ? [] : mappedClaimPaths(options.claims);
  const expired = (detail: string) =>
    new UpstreamSignInError('sign_in_expired', 'This sign-in has expired or was already used. Start again.', detail);

  return {
    async start(interactionUid) {
      const { authorization } = await endpoints();
      const state = randomToken();
      const record: PendingUpstreamSignIn = {
        interactionUid,
        codeVerifier: randomToken(),
        nonce: randomToken(),
        upstreamIssuer: upstream.issuer,
        redirectUri,
      };
      await pending.put(state, record, PENDING_SIGN_IN_SECONDS);
      return authorizationRequestUrl({
        endpoint: authorization,
        client,
        redirectUri,
        scopes: upstream.scopes,
        state,
        codeVerifier: record.codeVerifier,
        parameters: { nonce: record.nonce },
      });
    },

    async finish(callback, expect = {}) {
      const state = callback.get('state');
      if (state === null || state === '') throw expired('the callback has no state');
      const record = pendingSignInOf(await pending.take(state));
      if (record === undefined) throw expired('no pending sign-in has this state');
      if (record.redirectUri !== redirectUri || record.upstreamIssuer !== upstream.issuer) {
        throw expired('the state was issued for another callback or upstream');
      }
      if (expect.interactionUid !== undefined && expect.interactionUid !== record.interactionUid) {
        throw expired("the state belongs to another browser's interaction");
      }
      const found = await endpoints();
      // RFC 9207 section 2.4: a client that knows its server sends `iss` compares it (mix-up defence).
      const iss = callback.get('iss');
      if ((iss !== null || found.issuerInResponse) && iss !== upstream.issuer) {
        throw new UpstreamSignInError(
          'id_token_invalid',
          'The identity provider’s answer could not be verified, so the sign-in was stopped.',
          `the authorization response's "iss" is ${JSON.stringify(iss)}`,
        );
      }
      const error = callback.get('error');
      if (error !== null) {
        const code = oauthErrorCode(error) ?? 'error';
        throw new UpstreamSignInError(
          'upstream_refused',
          `The identity provider refused the sign-in (${code}).`,
          `authorization response: ${code}: ${describe(callback.get('error_description') ?? undefined)}`,
        );
      }
      const code = callback.get('code');
      if (code === null || code === '') {
        throw new UpstreamSignInError(
          'upstream_misconfigured',
          'The identity provider answered the sign-in in a way the gateway cannot use.',
          'the authorization response has neither a code nor an error',
        );
      }
      const tokens = await redeemAuthorizationCode({
        endpoint: found.token,
        client,
        code,
        redirectUri,
        codeVerifier: record.codeVerifier,
        fetch: fetcher,
      });
      if (typeof tokens.id_token !== 'string') {
        throw new UpstreamSignInError(
          'upstream_misconfigured',
          'The identity provider sent no ID token; the tenant’s administrator must check that the "openid" scope is granted.',
          'the token response has no id_token',
        );
      }
      const idClaims = await verifyIdToken(tokens.id_token, {
        issuer: upstream.issuer,
        clientId: upstream.clientId,
        nonce: record.nonce,
        algorithms: found.idTokenAlgorithms,
        keys: keys(found.jwks),
        now: now(),
      });
      let claims = idClaims;
      // Userinfo only for what the ID token lacks: one request less for providers (Entra ID) whose ID token has it all.
      const lacking = wanted.some((path) => claimAt(idClaims, path) === undefined);
      if (lacking && found.userinfo !== undefined && typeof tokens.access_token === 'string') {
        const userinfo = await fetchUserInfo(found.userinfo, tokens.access_token, idClaims.sub as string, fetcher);
        claims = { ...userinfo, ...idClaims };
      }
      return { interactionUid: record.interactionUid, upstreamIssuer: upstream.issuer, claims };
    },
  };
}
