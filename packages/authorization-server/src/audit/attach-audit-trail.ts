import type { RecordedEvent, WriteContext } from '@mcpgw/control-plane';
import type { Logger } from '@mcpgw/core';
import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { oidcProviderModule } from '../oidc-provider-module.js';
import { JWT_BEARER_GRANT_TYPE } from '../enterprise/id-jag-grant-type.js';
import type { UpstreamLoginError } from '../interactions/upstream-login.js';

/** Where the audited steps go: the control plane's audit log (ControlPlaneStore.recordEvent). */
export type RecordAuditEvent = (context: WriteContext, event: RecordedEvent) => Promise<void>;

export interface AuditTrailOptions {
  readonly tenantId: string;
  /** The tenant's issuer: the actors' `issuer`, as a token's `iss` names who vouched for its `sub`. */
  readonly issuer: string;
  readonly record: RecordAuditEvent;
  readonly logger: Logger;
}

/** The parts of oidc-provider's models the trail reads; never a token's or code's value, nor a secret. */
interface GrantLike {
  readonly jti?: string;
  readonly accountId?: string;
  readonly clientId?: string;
  readonly openid?: { scope?: string; claims?: string[] };
  readonly resources?: Record<string, string>;
}
interface ClientLike {
  readonly clientId: string;
  readonly clientName?: string;
  readonly redirectUris?: readonly string[];
  readonly grantTypes?: readonly string[];
  readonly tokenEndpointAuthMethod?: string;
  readonly scope?: string;
}
interface TokenLike {
  readonly accountId?: string;
  readonly clientId?: string;
  readonly grantId?: string;
  readonly scope?: string;
  readonly resourceServer?: { audience?: string };
}

const scopesOf = (scope: string | undefined): string[] => (scope ?? '').split(' ').filter(Boolean);

/**
 * Audits the steps of one tenant's provider that give or end someone's access
 * (docs/admin-api.md, "Audit log"), from oidc-provider's events:
 *
 * - `registration_create.success`: a client registered itself (RFC 7591);
 *   the actor is the client.
 * - `grant.saved`: the user's consent, a grant created or extended, with its
 *   scopes. The token endpoint saves a Grant only for an identity assertion
 *   exchange, which is audited as that, so a save during a token request is
 *   left out (the request is the one oidc-provider's async context holds).
 * - `grant.revoked` at the token endpoint: oidc-provider revokes the whole
 *   grant when a refresh token is presented again (RFC 9700 section 4.14.2)
 *   or an authorization code twice (RFC 6749 section 4.1.2).
 * - `grant.success` for the JWT bearer grant: an ID-JAG exchanged.
 *
 * The listeners run after the response is decided and do not wait on the
 * write, so a slow or failed audit write never changes an OAuth answer; a
 * failed write is logged at error level with the whole event, so it is not
 * lost silently. Only ids, scopes and client metadata are recorded.
 */
export function attachAuditTrail(provider: Provider, options: AuditTrailOptions): void {
  const { issuer } = options;
  const write = (actor: WriteContext['actor'], event: Omit<RecordedEvent, 'tenantId'>, ctx?: KoaContextWithOIDC) =>
    writeAuditEvent(options, { actor, ...(ctx?.ip === undefined ? {} : { clientAddress: ctx.ip }) }, event);
  const endUser = (accountId: string, clientId: string | undefined): WriteContext['actor'] => ({
    kind: 'end-user',
    subject: accountId,
    issuer,
    ...(clientId === undefined ? {} : { clientId }),
  });

  provider.on('registration_create.success', (ctx: KoaContextWithOIDC, client: ClientLike) => {
    write(
      { kind: 'client', subject: client.clientId, issuer, clientId: client.clientId },
      {
        action: 'register',
        targetType: 'oauth-client',
        targetId: client.clientId,
        before: undefined,
        after: {
          clientId: client.clientId,
          ...(client.clientName === undefined ? {} : { clientName: client.clientName }),
          redirectUris: client.redirectUris ?? [],
          grantTypes: client.grantTypes ?? [],
          tokenEndpointAuthMethod: client.tokenEndpointAuthMethod ?? null,
          ...(client.scope === undefined ? {} : { scope: client.scope }),
        },
      },
      ctx,
    );
  });

  provider.on('grant.saved', (grant: GrantLike) => {
    const ctx = oidcProviderModule().Provider.ctx;
    if (ctx?.oidc?.route === 'token') return;
    if (grant.jti === undefined || grant.accountId === undefined) return;
    write(
      endUser(grant.accountId, grant.clientId),
      {
        action: 'consent',
        targetType: 'oauth-grant',
        targetId: grant.jti,
        before: undefined,
        after: {
          clientId: grant.clientId ?? null,
          accountId: grant.accountId,
          scopes: scopesOf(grant.openid?.scope),
          claims: grant.openid?.claims ?? [],
          resources: Object.fromEntries(
            Object.entries(grant.resources ?? {}).map(([resource, scope]) => [resource, scopesOf(scope)]),
          ),
        },
      },
      ctx,
    );
  });

  provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    // The revocation endpoint and sign-out revoke at the client's or user's own request; the
    // token endpoint revokes only when a refresh token or a code is used twice.
    if (ctx.oidc?.route !== 'token') return;
    const entities = ctx.oidc.entities as { RefreshToken?: TokenLike; AuthorizationCode?: TokenLike };
    const reused = entities.RefreshToken ?? entities.AuthorizationCode;
    const clientId = ctx.oidc.client?.clientId ?? reused?.clientId;
    const accountId = reused?.accountId;
    write(
      accountId === undefined
        ? { kind: 'client', subject: clientId ?? 'unknown', issuer, ...(clientId === undefined ? {} : { clientId }) }
        : endUser(accountId, clientId),
      {
        action: 'revoke',
        targetType: 'oauth-grant',
        targetId: grantId,
        before: undefined,
        after: {
          reason: entities.RefreshToken === undefined ? 'authorization-code-reuse' : 'refresh-token-reuse',
          clientId: clientId ?? null,
          accountId: accountId ?? null,
        },
      },
      ctx,
    );
  });

  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    if (ctx.oidc?.params?.grant_type !== JWT_BEARER_GRANT_TYPE) return;
    const entities = ctx.oidc.entities as { AccessToken?: TokenLike; RefreshToken?: TokenLike };
    const token = entities.AccessToken;
    if (token?.accountId === undefined) return;
    const clientId = ctx.oidc.client?.clientId ?? token.clientId;
    write(
      endUser(token.accountId, clientId),
      {
        action: 'exchange',
        targetType: 'identity-assertion',
        targetId: clientId ?? 'unknown',
        before: undefined,
        after: {
          clientId: clientId ?? null,
          accountId: token.accountId,
          scopes: scopesOf(token.scope),
          resource: token.resourceServer?.audience ?? null,
          grantId: token.grantId ?? null,
          refreshToken: entities.RefreshToken !== undefined,
        },
      },
      ctx,
    );
  });
}

/** Records one event without waiting for it; a failed write is logged at error level with the whole event. */
function writeAuditEvent(options: AuditTrailOptions, context: WriteContext, event: Omit<RecordedEvent, 'tenantId'>) {
  const full: RecordedEvent = { tenantId: options.tenantId, ...event };
  let pending: Promise<void>;
  try {
    pending = options.record(context, full);
  } catch (error) {
    pending = Promise.reject(error);
  }
  pending.catch((error: unknown) => {
    options.logger.error(
      { err: error, audit: { ...context, ...full } },
      'authorization server: an audit event was not recorded',
    );
  });
}

/**
 * Why an upstream sign-in failed, in the upstream module's words, for the
 * failures that are someone being kept out: the provider refused (the user
 * cancelled, or was not allowed), it signed nobody in (no usable subject),
 * or its ID token failed a check of OpenID Connect Core 1.0 section 3.1.3.7
 * (what a forged or replayed callback looks like). An unreachable or
 * misconfigured provider and an expired sign-in are the operator's to read
 * in the log, not access decisions.
 */
const REFUSALS = new Set(['upstream_refused', 'subject_missing', 'id_token_invalid']);

/**
 * The `refuse` events of a tenant's hosted server: an upstream sign-in kept
 * out, with the client it was for (no account is known: nobody signed in).
 * A failure that gives no reason counts as a refusal when it answers
 * `access_denied` (RFC 6749 section 4.1.2.1). The public description is
 * kept, cut to 300 characters; the provider's own detail never is.
 */
export function auditSignInRefusal(
  options: AuditTrailOptions,
): (failure: UpstreamLoginError, clientId: string | undefined) => void {
  return (failure, clientId) => {
    const refused = failure.reason === undefined ? failure.error === 'access_denied' : REFUSALS.has(failure.reason);
    if (!refused) return;
    writeAuditEvent(
      options,
      {
        actor: {
          kind: 'client',
          subject: clientId ?? 'unknown',
          issuer: options.issuer,
          ...(clientId === undefined ? {} : { clientId }),
        },
      },
      {
        action: 'refuse',
        targetType: 'sign-in',
        targetId: clientId ?? 'unknown',
        before: undefined,
        after: {
          clientId: clientId ?? null,
          error: failure.error,
          reason: failure.reason ?? null,
          description: failure.description?.slice(0, 300) ?? null,
        },
      },
    );
  };
}
