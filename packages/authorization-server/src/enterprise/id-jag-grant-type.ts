import type { AuthorizationServerSettings, ClaimMapping } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import type { TokenEndpointGrantContext } from 'oidc-provider';
import { errors } from '../oidc-provider-module.js';
import type { AssertionKeyResolver } from './assertion-issuer-keys.js';
import { AssertionRefused, invalidGrant } from './assertion-refused.js';
import { assertionReplayKey, type AssertionReplayStore } from './assertion-replay.js';
import { grantedScopes } from './assertion-scopes.js';
import {
  ASSERTION_CLOCK_TOLERANCE_SECONDS,
  verifyIdentityAssertion,
  type VerifiedAssertion,
} from './verify-identity-assertion.js';

/** RFC 7523 section 2.1: the JWT bearer authorization grant. */
export const JWT_BEARER_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * The ID-JAG profile's identifier in RFC 8414 metadata
 * (`authorization_grant_profiles_supported`), by which a client tells that
 * this server accepts ID-JAGs: the MCP enterprise-managed authorization
 * extension, section 6.
 */
export const ID_JAG_GRANT_PROFILE = 'urn:ietf:params:oauth:grant-profile:id-jag';

/** An account as the tenant's claim mapping makes it from verified claims (the upstream sign-in's mapping). */
export interface MappedAssertionAccount {
  /** The oidc-provider account id, hence the tokens' `sub`. */
  readonly accountId: string;
  /** The claims the gateway's tokens carry for the account (email, name, groups, extra claims). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** What the mapping left out and why (logged, never shown). */
  readonly dropped?: readonly string[];
}

/**
 * The tenant's claim mapping applied to an identity (the upstream engineer's
 * `mapUpstreamClaims` has this shape). Throws when the identity has no
 * usable subject.
 */
export type AssertionClaimMapper = (
  mapping: ClaimMapping,
  identity: { readonly upstreamIssuer: string; readonly claims: Readonly<Record<string, unknown>> },
) => MappedAssertionAccount;

/**
 * Where the mapped claims of an account are kept (per tenant and account),
 * so that the access token's claims (`extraTokenClaims`) and a later
 * refresh (`findAccount`) have them, exactly as after a sign-in.
 */
export interface AssertionAccounts {
  remember(account: {
    readonly accountId: string;
    /** The identity provider that issued the assertion. */
    readonly issuer: string;
    readonly claims: Readonly<Record<string, unknown>>;
  }): Promise<void>;
}

export interface IdJagGrantOptions {
  /** This tenant's hosted issuer (`${base}/t/{tenant}/oauth`): the assertions' required `aud`. */
  readonly issuer: string;
  /** The tenant's resource identifiers, canonical first: an assertion's `resource` must be one. */
  readonly resources: readonly string[];
  /** The scopes this server offers for the tenant's resource. */
  readonly scopes: readonly string[];
  /** Verification keys of `settings.enterpriseManaged.issuers` (see createAssertionKeyResolver). */
  readonly keys: AssertionKeyResolver;
  readonly mapClaims: AssertionClaimMapper;
  readonly accounts: AssertionAccounts;
  readonly replay: AssertionReplayStore;
  readonly logger: Logger;
  /** Milliseconds since the epoch; default Date.now. */
  readonly now?: () => number;
}

/** What the core needs to register a grant type with `provider.registerGrantType(name, handler, parameters)`. */
export interface GrantTypeRegistration {
  readonly name: string;
  /** Token request parameters the grant reads (besides `grant_type` and client authentication). */
  readonly parameters: readonly string[];
  readonly handler: (ctx: TokenEndpointGrantContext) => Promise<void>;
  /**
   * Members to add to the server's metadata (oidc-provider's `discovery`
   * configuration). `grant_types_supported` needs none: oidc-provider lists
   * every registered grant type there.
   */
  readonly discovery: Readonly<Record<string, unknown>>;
}

/**
 * Enterprise-managed authorization (the MCP extension of that name): the
 * RFC 7523 JWT bearer grant accepting an Identity Assertion JWT
 * Authorization Grant from an identity provider of
 * `settings.enterpriseManaged.issuers`. The IdP decided who may use which
 * client with this server, so there is no consent screen: a valid assertion
 * yields an RFC 9068 access token for the asserted resource (extension
 * section 5.1: "audience-restricted to the MCP Server identified by the
 * `resource` claim"), with the account's claims mapped as at a sign-in, and
 * a refresh token only when `settings.tokens.refreshTokensForAssertions` is
 * set and the client may refresh (draft section 4.3.4 advises the IdP
 * against refresh tokens; here a new assertion is the usual renewal).
 * Every refusal is `invalid_grant` saying what was wrong.
 *
 * Throws TypeError when the settings configure no enterprise-managed issuers.
 */
export function idJagGrantType(
  settings: AuthorizationServerSettings,
  options: IdJagGrantOptions,
): GrantTypeRegistration {
  if (settings.enterpriseManaged === undefined) {
    throw new TypeError('authorizationServer.enterpriseManaged is not configured');
  }
  if (options.resources.length === 0) throw new TypeError('the tenant has no resource identifier');
  const { issuer, resources, keys, replay, accounts, mapClaims } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ grant: 'id-jag' });

  async function handler(ctx: TokenEndpointGrantContext): Promise<void> {
    const { client, params, provider } = ctx.oidc;
    // RFC 7521 section 4.1: `assertion` is REQUIRED; its absence is a malformed request.
    const assertion = params.assertion;
    if (typeof assertion !== 'string' || assertion === '') {
      throw new errors.InvalidRequest("missing required parameter 'assertion'");
    }

    let verified: VerifiedAssertion | undefined;
    let accepted: { verified: VerifiedAssertion; resource: string; scopes: string[]; account: MappedAssertionAccount };
    try {
      verified = await verifyIdentityAssertion(
        assertion,
        { audience: issuer, clientId: client.clientId, resources },
        { keys, now },
      );
      const resource = chosenResource(verified, params.resource);
      const scopes = grantedScopes({
        asserted: verified.scopes,
        offered: options.scopes,
        requested: typeof params.scope === 'string' ? params.scope.split(' ').filter(Boolean) : undefined,
        registered: client.scope?.split(' ').filter(Boolean),
      });
      const account = mappedAccount(verified);
      // Last, so that an assertion refused for another reason is not spent.
      const ttl = Math.max(1, verified.expiresAt + ASSERTION_CLOCK_TOLERANCE_SECONDS - Math.floor(now() / 1000));
      if (!(await replay.firstUse(assertionReplayKey(issuer, verified.issuer, verified.jti), ttl))) {
        throw new AssertionRefused('replayed', 'The assertion was already used: its jti may be presented only once');
      }
      accepted = { verified, resource, scopes, account };
    } catch (error) {
      if (!(error instanceof AssertionRefused)) throw error;
      // Extension section 7.4.2: never log the assertion itself.
      logger.info(
        { reason: error.reason, clientId: client.clientId, assertionIssuer: verified?.issuer },
        'identity assertion refused',
      );
      throw invalidGrant(error.message);
    }

    const { resource, scopes, account } = accepted;
    const assertionIssuer = accepted.verified.issuer;
    if (account.dropped !== undefined && account.dropped.length > 0) {
      logger.info({ assertionIssuer, dropped: account.dropped }, 'claims left out of the tokens');
    }
    await accounts.remember({ accountId: account.accountId, issuer: assertionIssuer, claims: account.claims });

    const scope = scopes.join(' ');
    const resourceServer = new provider.ResourceServer(resource, {
      audience: resource,
      scope: options.scopes.join(' '),
      accessTokenFormat: 'jwt',
      accessTokenTTL: settings.tokens.accessTokenSeconds,
    });

    let grantId: string | undefined;
    let refreshToken: string | undefined;
    if (settings.tokens.refreshTokensForAssertions && client.grantTypeAllowed('refresh_token')) {
      // A refresh is checked against a Grant (oidc-provider's refresh_token grant), so one is
      // made only here: an access token alone needs none, and a Grant per exchange would pile up.
      const grant = new provider.Grant({ accountId: account.accountId, clientId: client.clientId });
      grant.addResourceScope(resource, scope);
      grantId = await grant.save();
      const refresh = new provider.RefreshToken({
        accountId: account.accountId,
        client,
        grantId,
        gty: JWT_BEARER_GRANT_TYPE,
        resource,
        scope,
      });
      ctx.oidc.entity('Grant', grant);
      ctx.oidc.entity('RefreshToken', refresh);
      refreshToken = await refresh.save();
    }

    const accessToken = new provider.AccessToken({
      accountId: account.accountId,
      client,
      // The typings require a grant id; a token without a refresh token belongs to no Grant.
      grantId: grantId as string,
      gty: JWT_BEARER_GRANT_TYPE,
      resourceServer,
      scope: scope || undefined,
    } satisfies ConstructorParameters<typeof provider.AccessToken>[0]);
    ctx.oidc.entity('AccessToken', accessToken);
    const value = await accessToken.save();

    logger.info(
      { assertionIssuer, clientId: client.clientId, resource, scope, refreshToken: !!refreshToken },
      'identity assertion exchanged',
    );
    // RFC 6749 section 5.1; `scope` always, since it may differ from what was asked.
    ctx.body = {
      access_token: value,
      token_type: accessToken.tokenType,
      expires_in: accessToken.expiration,
      ...(scope === '' ? {} : { scope }),
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
    };
  }

  function mappedAccount(verified: VerifiedAssertion): MappedAssertionAccount {
    try {
      return mapClaims(settings.claims, { upstreamIssuer: verified.issuer, claims: verified.claims });
    } catch {
      throw new AssertionRefused(
        'no_subject',
        `The assertion names no usable subject (the claim "${settings.claims.subject}" of authorizationServer.claims.subject)`,
      );
    }
  }

  return {
    name: JWT_BEARER_GRANT_TYPE,
    // `resource` (RFC 8707 section 2.2) may pick one of several asserted resources; `scope` narrows.
    parameters: ['assertion', 'scope', 'resource'],
    handler,
    discovery: { authorization_grant_profiles_supported: [ID_JAG_GRANT_PROFILE] },
  };
}

/**
 * The access token's resource: the request's `resource`, when given, must be
 * one the assertion names (RFC 8707 section 2.2, extension section 7.6);
 * otherwise the assertion's first resource of this tenant.
 */
function chosenResource(verified: VerifiedAssertion, requested: unknown): string {
  if (requested === undefined) return verified.resources[0]!;
  if (typeof requested === 'string' && verified.resources.includes(requested)) return requested;
  throw new AssertionRefused(
    'wrong_resource',
    'The resource parameter must be a resource the assertion was issued for',
  );
}
