import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '@mcpgw/core';
import type { RuntimeLease } from '../tenant-registry.js';
import type { TenantRuntime } from '../tenant-runtime.js';
import type { AdminPrincipal } from './admin-principal.js';
import { PreviewInputError, previewAs } from './preview-as.js';
import type { PatternCheckBudget } from './preview-pattern-check.js';
import type { PreviewRequest, PreviewResponse } from './preview-schema.js';
import { previewRequestSchema } from './preview-schema.js';

const TENANT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** A preview lists one page and a bounded pattern check; past this the caller gets a 503, not a hang. */
const PREVIEW_DEADLINE_MS = 15_000;

/** What a preview needs of the gateway. */
export interface PreviewDeps {
  /** Holds the runtime the registry serves for a tenant (`TenantRegistry.acquire`). */
  acquire: (tenantId: string) => RuntimeLease<TenantRuntime> | undefined;
  /** The access log's fingerprint of a caller (createPrincipalFingerprint with the server secret). */
  principalFingerprint: (principal: Principal) => string;
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
    readonly type: 'not-found' | 'validation-failed' | 'unavailable',
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
      principalFingerprint: deps.principalFingerprint,
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

export interface PreviewRouteOptions extends PreviewDeps {
  /**
   * Who is calling (the admin API's bearer and session checks). `undefined`
   * means no credentials (401); a refusal is thrown as an error with a
   * `statusCode`.
   */
  authenticate: (request: FastifyRequest) => Promise<AdminPrincipal | undefined>;
}

interface Params {
  tenantId: string;
}

/**
 * `POST /tenants/{tenantId}/preview` as a Fastify plugin, to be registered
 * under the `/admin/v1` prefix: what an MCP caller with the given claims or
 * token would see (see preview-as.ts). Operators may preview any tenant, a
 * tenant admin only its own: any other tenant answers the very 404 of a
 * tenant that does not exist. Errors are RFC 9457 problem details in the
 * admin API's types.
 */
export const previewRoutes: FastifyPluginAsync<PreviewRouteOptions> = async (app, options) => {
  // Encapsulated: framework refusals of this route (bad JSON, wrong media type) become problems too.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 401) return problem(reply, 'unauthenticated', error.message);
    if (status === 403) return problem(reply, 'forbidden', error.message);
    if (status === 415) return problem(reply, 'unsupported-media-type', error.message);
    if (status >= 400 && status < 500) return problem(reply, 'invalid-request', error.message);
    request.log.error({ err: error }, 'admin preview failed');
    return problem(reply, 'server-fault', 'The preview failed; the gateway log has the cause');
  });

  app.post<{ Params: Params }>('/tenants/:tenantId/preview', async (request, reply) => {
    const admin = await options.authenticate(request);
    if (admin === undefined) {
      reply.header('www-authenticate', 'Bearer');
      return problem(reply, 'unauthenticated', 'Send an access token in the Authorization header (Bearer)');
    }
    const { tenantId } = request.params;
    // One answer for "absent" and "not yours", so a tenant admin learns nothing of other tenants.
    if (admin.kind === 'tenant-admin' && admin.tenantId !== tenantId)
      return problem(reply, 'not-found', NO_SUCH_TENANT);
    if (request.body === undefined || request.body === null) {
      return problem(reply, 'invalid-request', 'This operation needs a JSON body (Content-Type: application/json)');
    }
    const parsed = previewRequestSchema.safeParse(request.body);
    if (!parsed.success) {
      return problem(
        reply,
        'validation-failed',
        'The body does not have the expected shape',
        parsed.error.issues.map((issue) => ({ pointer: jsonPointer(issue.path), detail: issue.message })),
      );
    }
    try {
      const preview = await previewTenant(options, tenantId, parsed.data, abortOnDisconnect(reply));
      request.log.info(
        { tenant: tenantId, admin: admin.subject, previewed: preview.principalFingerprint, from: preview.from },
        'admin preview',
      );
      return reply.code(200).header('cache-control', 'no-store').type('application/json').send(preview);
    } catch (error) {
      if (error instanceof PreviewRefusal) return problem(reply, error.type, error.detail, error.errors);
      throw error;
    }
  });
};

/** The admin API's problem types this route can answer, with their status and title. */
const PROBLEMS = {
  'invalid-request': { status: 400, title: 'The request is malformed' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Not allowed' },
  'not-found': { status: 404, title: 'Not found' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'validation-failed': { status: 422, title: 'The request content is invalid' },
  'server-fault': { status: 500, title: 'Internal server error' },
  unavailable: { status: 503, title: 'Service unavailable' },
} as const;

/** An RFC 9457 problem; the type is a URI that names it (section 3.1.1), not one to dereference. */
function problem(
  reply: FastifyReply,
  type: keyof typeof PROBLEMS,
  detail: string,
  errors: readonly PreviewFieldError[] = [],
): FastifyReply {
  const { status, title } = PROBLEMS[type];
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('application/problem+json')
    .send({
      type: `urn:mcpgw:admin:problem:${type}`,
      title,
      status,
      detail,
      ...(errors.length === 0 ? {} : { errors }),
    });
}

/** A JSON Pointer (RFC 6901) from a path of keys and indexes. */
function jsonPointer(path: readonly PropertyKey[]): string {
  return path.map((key) => `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
