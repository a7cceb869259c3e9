import type { Principal } from '@mcpgw/core';
import { PreviewInputError, previewAs } from './preview-as.js';
import type { PatternCheckBudget } from './preview-pattern-check.js';
import type { PreviewRequest, PreviewResponse } from './preview-schema.js';
import type { ProblemType } from './problem.js';
import type { TenantRuntimeLease, TenantRuntimeView } from './tenant-ports.js';

const TENANT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** A preview lists one page and a bounded pattern check; past this the caller gets a 503, not a hang. */
const PREVIEW_DEADLINE_MS = 15_000;

/** What a preview needs of the gateway. */
export interface PreviewDeps {
  /** Holds the runtime the registry serves for a tenant (`TenantRegistry.acquire`). */
  acquire: (tenantId: string) => TenantRuntimeLease<TenantRuntimeView> | undefined;
  /** The path of the tenant's MCP endpoint, where a pasted token is presented. */
  mcpPath: (tenantId: string) => string;
  /** A caller's fingerprint within a tenant (createTenantPrincipalFingerprint with the server secret). */
  tenantFingerprint: (tenantId: string, principal: Principal) => string;
  patternBudget?: PatternCheckBudget;
}

/** One offending input, as a JSON Pointer (RFC 6901) into the body (RFC 9457 section 3.2, `errors`). */
export interface PreviewFieldError {
  readonly pointer: string;
  readonly detail: string;
}

/**
 * A preview refused; `type` is the admin API's problem type (docs/admin-api.md,
 * "Problems"), so the admin API can send it as its own.
 */
export class PreviewRefusal extends Error {
  override readonly name = 'PreviewRefusal';
  constructor(
    readonly type: Extract<ProblemType, 'not-found' | 'validation-failed' | 'unavailable'>,
    readonly detail: string,
    readonly errors: readonly PreviewFieldError[] = [],
  ) {
    super(detail);
  }
}

/** The same words as every admin route's answer for a tenant that is missing or not the caller's. */
const NO_SUCH_TENANT = 'No such tenant, or not one you administer';

/**
 * The preview of one tenant, for a caller already allowed to administer it:
 * holds the tenant's serving runtime for the length of the preview (as a
 * request does) and refuses with the admin API's problem types.
 */
export async function previewTenant(
  deps: PreviewDeps,
  tenantId: string,
  request: PreviewRequest,
  signal: AbortSignal,
): Promise<PreviewResponse> {
  const lease = TENANT_ID.test(tenantId) ? deps.acquire(tenantId) : undefined;
  if (lease === undefined) throw new PreviewRefusal('not-found', NO_SUCH_TENANT);
  const bounded = AbortSignal.any([signal, AbortSignal.timeout(PREVIEW_DEADLINE_MS)]);
  try {
    return await previewAs(lease.runtime, request, {
      tenantFingerprint: deps.tenantFingerprint,
      mcpPath: deps.mcpPath(tenantId),
      signal: bounded,
      ...(deps.patternBudget === undefined ? {} : { patternBudget: deps.patternBudget }),
    });
  } catch (error) {
    if (error instanceof PreviewInputError) {
      throw new PreviewRefusal('validation-failed', error.message, [
        { pointer: `/${error.field}`, detail: error.message },
      ]);
    }
    if (bounded.aborted && !signal.aborted) {
      throw new PreviewRefusal('unavailable', 'The preview did not finish in time; try again');
    }
    throw error;
  } finally {
    lease.release();
  }
}
