import type { AccessScope, Principal, ResourceDescriptor } from '@mcpgw/core';
import { unrestrictedScope } from '@mcpgw/core';
import { AuthError } from '@mcpgw/auth';
import { matchingGrants } from '@mcpgw/policy';
import type { PatternCheckBudget } from './preview-pattern-check.js';
import { findUnmatchedPatterns } from './preview-pattern-check.js';
import type { PreviewRequest, PreviewResponse } from './preview-schema.js';
import type { TenantAuth, TenantRuntimeView } from './tenant-ports.js';

/**
 * A preview that cannot be answered because its input is wrong: a token the
 * tenant's authenticator refuses, claims it cannot map, an issuer it does not
 * trust. `field` names the offending member of the request body.
 */
export class PreviewInputError extends Error {
  constructor(
    readonly field: 'claims' | 'issuer' | 'token',
    message: string,
  ) {
    super(message);
    this.name = 'PreviewInputError';
  }
}

export interface PreviewOptions {
  /**
   * The caller's fingerprint within this tenant (createTenantPrincipalFingerprint):
   * never the access log's gateway-wide `principal`, which an admin could
   * otherwise compute for another tenant's callers.
   */
  tenantFingerprint: (tenantId: string, principal: Principal) => string;
  /** How much listing the grant-pattern warnings may cost; see preview-pattern-check.ts. */
  patternBudget?: PatternCheckBudget;
  /** The tenant's MCP endpoint path, where a pasted token is presented as an MCP request would be. */
  mcpPath: string;
  signal: AbortSignal;
}

/**
 * "Preview as": what an MCP request of the given caller would see of the
 * tenant, computed by the very objects that serve such a request, from the
 * runtime the registry serves now:
 *
 * - a pasted token goes through `runtime.auth.authenticate`, the MCP route's
 *   own call (signature, issuer, audience, expiry, required scopes);
 * - given claims go through the same claims-to-principal mapping a verified
 *   token's take (`principalFromClaims` with the issuer's claim settings);
 * - the principal then goes through `auth.admit`, the step `authenticate`
 *   itself takes (required scopes, then the grants' resource set), and
 *   `matchingGrants`, the filter `resolveAccess` uses;
 * - the first page is the tenant's catalog `forScope(scope).listResources`,
 *   the object `resources/list` calls, with `cacheable: false`: the
 *   per-caller result cache is bypassed both ways, so nothing is looked up
 *   or stored under the previewed caller's fingerprint. Sources' own shared
 *   listing caches (keyed by tenant and source, never by caller) work as for
 *   any request.
 *
 * - a source that answers under each caller's own backend identity
 *   (`Source.backendIdentity`) names the one this caller gets, by the same
 *   function its answers and cache keys use; the pattern check lists as
 *   the caller too.
 *
 * Only descriptors are returned, never contents: no read is made. The page's
 * cursor is left out, since it is sealed to the previewed caller.
 */
export async function previewAs(
  runtime: TenantRuntimeView,
  request: PreviewRequest,
  options: PreviewOptions,
): Promise<PreviewResponse> {
  const tenantId = runtime.config.id;
  const auth = runtime.auth;
  if (auth === undefined) {
    // An anonymous tenant (loopback development only) shows everything to everyone.
    return {
      tenantId,
      revision: runtime.revision,
      from: 'anonymous',
      admitted: true,
      grants: { matched: [], unmatched: runtime.config.grants.map((grant) => grant.name) },
      resources: await firstPage(runtime, unrestrictedScope, options.signal),
      warnings: [],
    };
  }
  const principal =
    request.token === undefined
      ? claimsPrincipal(auth, request.claims ?? {}, request.issuer)
      : await tokenPrincipal(runtime, request.token, options.mcpPath, options.signal);
  const admission = auth.admit(principal);
  const matched = matchingGrants(auth.grants, principal);
  const resources = admission.ok
    ? await firstPage(runtime, admission.scope, options.signal)
    : { items: [], hasMore: false, unavailableSources: [], incompleteSources: [] };
  const identities = admission.ok ? backendIdentities(runtime, admission.scope) : [];
  const warnings = await findUnmatchedPatterns(matched, auth.grants, runtime.catalog.sources, {
    signal: options.signal,
    caller: admission.ok ? admission.scope.caller : undefined,
    ...(options.patternBudget === undefined ? {} : { budget: options.patternBudget }),
  });
  return {
    tenantId,
    revision: runtime.revision,
    from: request.token === undefined ? 'claims' : 'token',
    principal: {
      issuer: principal.issuer,
      subject: principal.subject,
      ...(principal.clientId === undefined ? {} : { clientId: principal.clientId }),
      scopes: [...principal.scopes],
      groups: [...principal.groups],
    },
    principalFingerprint: options.tenantFingerprint(tenantId, principal),
    ...(identities.length === 0 ? {} : { backendIdentities: identities }),
    admitted: admission.ok,
    ...(admission.ok ? {} : { missingScopes: [...admission.missingScopes] }),
    grants: {
      matched: matched.map((grant) => ({
        name: grant.name,
        allow: grant.allow.map((allow) => ({
          source: allow.source,
          ...(allow.uris === undefined ? {} : { uris: [...allow.uris] }),
        })),
      })),
      unmatched: auth.grants.grants.filter((grant) => !matched.includes(grant)).map((grant) => grant.name),
    },
    resources,
    warnings,
  };
}

function claimsPrincipal(auth: TenantAuth, claims: Record<string, unknown>, issuer: string | undefined): Principal {
  try {
    return auth.principalFromClaims(claims, issuer);
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    throw new PreviewInputError(error.code === 'invalid_request' ? 'issuer' : 'claims', error.message);
  }
}

/**
 * The token as the MCP endpoint receives it: an Authorization header on a
 * request to the tenant's endpoint. A refusal other than missing scopes is
 * an input error carrying the authenticator's own reason.
 */
async function tokenPrincipal(
  runtime: TenantRuntimeView,
  token: string,
  mcpPath: string,
  signal: AbortSignal,
): Promise<Principal> {
  const outcome = await runtime.auth!.authenticate(
    {
      rawHeaders: ['authorization', `Bearer ${token}`],
      url: mcpPath,
    },
    signal,
  );
  if (outcome.ok) return outcome.principal;
  // Verified, but short of the tenant's required scopes: previewed as refused.
  if (outcome.principal !== undefined) return outcome.principal;
  throw new PreviewInputError('token', `The tenant refuses this token: ${outcome.error.message}`);
}

/**
 * The backend identity each source that has one (`Source.backendIdentity`)
 * gives the caller: the very function its answers and its cache keys use.
 */
function backendIdentities(
  runtime: TenantRuntimeView,
  scope: AccessScope,
): NonNullable<PreviewResponse['backendIdentities']> {
  return runtime.catalog.sources.flatMap((source) =>
    source.backendIdentity === undefined || !scope.allowsSource(source.id)
      ? []
      : [{ source: source.id, identity: { ...source.backendIdentity(scope.caller).shown } }],
  );
}

async function firstPage(
  runtime: TenantRuntimeView,
  scope: AccessScope,
  signal: AbortSignal,
): Promise<PreviewResponse['resources']> {
  const page = await runtime.catalog.forScope(scope).listResources(undefined, signal, { cacheable: false });
  return {
    items: page.resources.map(descriptorOnly),
    hasMore: page.nextCursor !== undefined,
    unavailableSources: [...(page.unavailableSources ?? [])],
    incompleteSources: [...(page.incompleteSources ?? [])],
  };
}

/** The listing's own fields, named one by one so nothing else can ride along. */
function descriptorOnly(item: ResourceDescriptor): PreviewResponse['resources']['items'][number] {
  return {
    uri: item.uri,
    name: item.name,
    ...(item.title === undefined ? {} : { title: item.title }),
    ...(item.description === undefined ? {} : { description: item.description }),
    ...(item.mimeType === undefined ? {} : { mimeType: item.mimeType }),
    ...(item.size === undefined ? {} : { size: item.size }),
  };
}
