import type { Agent } from 'node:http';
import type { S3Client } from '@aws-sdk/client-s3';
import {
  egressAgents,
  errorSummary,
  findEgressRefusal,
  GatewayError,
  type Principal,
  type SourceContext,
} from '@mcpgw/core';
import type { CallerIdentityOptions } from './caller-identity-options.js';
import { planFor, webIdentitySubject, type CallerPlan } from './caller-plan.js';
import type { MintIdentityToken } from './identity-token.js';
import { createS3Access, type S3Access } from './s3-access.js';
import { createSessionS3Client } from './s3-client.js';
import type { S3SourceOptions } from './s3-source-options.js';
import { createSessionCache } from './session-cache.js';
import { assumeRoleWithWebIdentity, StsError, type SessionCredentials } from './sts-client.js';

/** The claim of a web identity token that carries session tags (IAM User Guide, "Passing session tags using AssumeRoleWithWebIdentity"). */
export const AWS_TAGS_CLAIM = 'https://aws.amazon.com/tags';

/** Credentials are fetched again this long before they expire, so no request is signed with ones about to lapse. */
export const REFRESH_BEFORE_MS = 5 * 60_000;

/** Backend identities whose sessions one source keeps at once. */
const MAX_SESSIONS = 1024;

/** What a caller reads with: their role session's access, or nothing (refused: they see nothing of the source). */
export type CallerAccessResult = { readonly kind: 'refused' } | { readonly kind: 'access'; readonly access: S3Access };

/** Each caller's bucket access under `callerIdentity`. */
export interface CallerAccess {
  /**
   * The access of `principal`'s role session, fetching its credentials
   * when the cache has none fresh. Throws MCPGW_SOURCE_UNAVAILABLE for this
   * caller alone when their claims cannot be tags or STS refuses or fails;
   * there is no fallback to the source's own credentials.
   */
  accessFor(principal: Principal | undefined, signal: AbortSignal | undefined): Promise<CallerAccessResult>;
  /** The caller's plan: its `key` is the backend identity caches key on. */
  planOf(principal: Principal | undefined): CallerPlan;
  close(): void;
}

export interface CallerAccessOptions {
  readonly options: S3SourceOptions;
  readonly callerIdentity: CallerIdentityOptions;
  readonly context: SourceContext;
  /** The source's own client: its request handler (pool, timeouts, egress guard) is shared. */
  readonly base: S3Client;
  readonly mintIdentityToken: MintIdentityToken;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}

/** The identity token port failed (no key for the tenant, a key store down). */
class MintFailed extends Error {
  constructor(cause: unknown) {
    super("the gateway could not mint the caller's identity token", { cause });
    this.name = 'MintFailed';
  }
}

interface Session {
  readonly credentials: SessionCredentials;
  readonly access: S3Access;
}

/** What an administrator can do about each STS refusal, as the caller's error says it. */
const STS_HINTS: Readonly<Record<string, string>> = {
  AccessDenied:
    "STS refused the role (AccessDenied): the role's trust policy must trust the tenant's issuer with this audience and subject",
  InvalidIdentityToken:
    "STS refused the gateway's identity token (InvalidIdentityToken): the tenant's issuer must be registered as an OIDC provider",
  IDPRejectedClaim: "STS refused a claim of the gateway's identity token (IDPRejectedClaim)",
  IDPCommunicationError: "STS could not fetch the tenant's signing keys (IDPCommunicationError)",
  ExpiredTokenException: "STS found the gateway's identity token expired (ExpiredTokenException): check the clocks",
  PackedPolicyTooLarge: 'STS refused the session tags as too large (PackedPolicyTooLarge)',
  RegionDisabledException: 'STS is not enabled in this region (RegionDisabledException)',
};

/** Each caller's bucket access: a role session per backend identity, cached until shortly before it expires. */
export function createCallerAccess(setup: CallerAccessOptions): CallerAccess {
  const { options, callerIdentity, context, base } = setup;
  const sourceId = context.sourceId;
  const endpoint = callerIdentity.stsEndpoint ?? `https://sts.${options.region}.amazonaws.com/`;
  const agents = context.egress === undefined ? undefined : egressAgents(context.egress);
  const agent: Agent | undefined =
    agents === undefined ? undefined : new URL(endpoint).protocol === 'https:' ? agents.httpsAgent : agents.httpAgent;
  const plans = new WeakMap<Principal, CallerPlan>();
  const sessions = createSessionCache<Session>((session) => session.credentials.expiration.getTime(), {
    refreshBeforeMs: REFRESH_BEFORE_MS,
    maxEntries: MAX_SESSIONS,
    now: setup.now,
  });
  const refused = planFor(callerIdentity, context.tenantId, undefined);

  function planOf(principal: Principal | undefined): CallerPlan {
    if (principal === undefined) return refused;
    let plan = plans.get(principal);
    if (plan === undefined) {
      plan = planFor(callerIdentity, context.tenantId, principal);
      plans.set(principal, plan);
    }
    return plan;
  }

  async function startSession(plan: Extract<CallerPlan, { kind: 'assume' }>, principal: Principal): Promise<Session> {
    const tags = Object.fromEntries(plan.tags.map(([name, value]) => [name, [value]]));
    const webIdentityToken = await mint({
      tenantId: context.tenantId,
      subject: webIdentitySubject(context.tenantId, principal.subject),
      audience: callerIdentity.audience,
      claims:
        plan.tags.length === 0
          ? {}
          : // AWS's format: each tag one value in a list; transitive, so a chained session keeps them.
            { [AWS_TAGS_CLAIM]: { principal_tags: tags, transitive_tag_keys: plan.tags.map(([name]) => name) } },
    });
    const credentials = await assumeRoleWithWebIdentity({
      endpoint,
      roleArn: plan.roleArn,
      roleSessionName: plan.sessionName,
      webIdentityToken,
      durationSeconds: callerIdentity.durationSeconds,
      agent,
      signal: AbortSignal.timeout(options.requestTimeoutMs),
    });
    const client = createSessionS3Client(options, base, credentials);
    return { credentials, access: createS3Access(client, options, context, 'absent') };
  }

  async function mint(request: Parameters<MintIdentityToken>[0]): Promise<string> {
    try {
      return await setup.mintIdentityToken(request);
    } catch (error) {
      throw new MintFailed(error);
    }
  }

  function unavailable(plan: Extract<CallerPlan, { kind: 'assume' }>, error: unknown): GatewayError {
    context.logger.warn(
      { operation: 'AssumeRoleWithWebIdentity', roleArn: plan.roleArn, err: errorSummary(error) },
      "S3 caller's role session failed",
    );
    const why =
      error instanceof StsError
        ? (STS_HINTS[error.code] ?? `STS refused the role session (${error.code})`)
        : findEgressRefusal(error) !== undefined
          ? "the gateway's egress policy refuses the STS endpoint"
          : error instanceof MintFailed
            ? error.message
            : error instanceof DOMException && error.name === 'TimeoutError'
              ? `STS did not answer within ${options.requestTimeoutMs} ms`
              : 'STS could not be reached';
    return new GatewayError(
      'MCPGW_SOURCE_UNAVAILABLE',
      `S3 source "${sourceId}" is unavailable for this caller: ${why}; the gateway's log has the details`,
      { cause: error },
    );
  }

  return {
    planOf,
    async accessFor(principal, signal) {
      const plan = planOf(principal);
      if (plan.kind === 'refuse' || principal === undefined) return { kind: 'refused' };
      if (plan.kind === 'unusable') {
        throw new GatewayError(
          'MCPGW_SOURCE_UNAVAILABLE',
          `S3 source "${sourceId}" cannot read for this caller: ${plan.reason}`,
        );
      }
      try {
        const session = await sessions.get(plan.key, () => startSession(plan, principal), signal);
        return { kind: 'access', access: session.access };
      } catch (error) {
        if (signal?.aborted === true) throw signal.reason;
        throw unavailable(plan, error);
      }
    },
    close() {
      sessions.clear();
    },
  };
}
