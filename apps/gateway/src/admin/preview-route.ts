import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '@mcpgw/core';
import type { RuntimeLease } from '../tenant-registry.js';
import type { TenantRuntime } from '../tenant-runtime.js';
import type { AdminPrincipal } from './admin-principal.js';
import { PreviewInputError, previewAs } from './preview-as.js';
import type { PatternCheckBudget } from './preview-pattern-check.js';
import { previewRequestSchema } from './preview-schema.js';

const TENANT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** A preview lists one page and a bounded pattern check; past this the caller gets a 503, not a hang. */
const PREVIEW_DEADLINE_MS = 15_000;

export interface PreviewRouteOptions {
  /**
   * Who is calling (the admin API's bearer and session checks). `undefined`
   * means no credentials (401); a refusal is thrown as an error with a
   * `statusCode`.
   */
  authenticate: (request: FastifyRequest) => Promise<AdminPrincipal | undefined>;
  /** Holds the runtime the registry serves for a tenant (`TenantRegistry.acquire`). */
  acquire: (tenantId: string) => RuntimeLease<TenantRuntime> | undefined;
  /** The access log's fingerprint of a caller (createPrincipalFingerprint with the server secret). */
  principalFingerprint: (principal: Principal) => string;
  patternBudget?: PatternCheckBudget;
}

interface Params {
  tenantId: string;
}

/**
 * `POST /tenants/{tenantId}/preview`, to be registered under the admin
 * API's `/admin/v1` prefix: what an MCP caller with the given claims or
 * token would see (see preview-as.ts). Operators may preview any tenant, a
 * tenant admin only its own: any other tenant answers the very 404 of a
 * tenant that does not exist. Errors are RFC 9457 problem details.
 */
export const previewRoutes: FastifyPluginAsync<PreviewRouteOptions> = async (app, options) => {
  // Encapsulated: framework refusals of this route (bad JSON, wrong media type) become problems too.
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status =
      error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (status >= 500) request.log.error({ err: error }, 'admin preview failed');
    return problem(reply, status, status >= 500 ? 'The preview failed; the gateway log has the cause' : error.message);
  });

  app.post<{ Params: Params }>('/tenants/:tenantId/preview', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const admin = await options.authenticate(request);
    if (admin === undefined) {
      reply.header('www-authenticate', 'Bearer');
      return problem(reply, 401, 'Sign in, or send an admin bearer token');
    }
    const { tenantId } = request.params;
    // RFC 9457 section 4: one answer for "absent" and "not yours", so a tenant admin learns nothing of others.
    const allowed = admin.kind === 'operator' || admin.tenantId === tenantId;
    const lease = allowed && TENANT_ID.test(tenantId) ? options.acquire(tenantId) : undefined;
    if (lease === undefined) return problem(reply, 404, 'No such tenant');
    try {
      const parsed = previewRequestSchema.safeParse(request.body);
      if (!parsed.success) {
        return problem(reply, 400, 'The preview request is invalid', {
          errors: parsed.error.issues.map((issue) => ({
            pointer: `#/${issue.path.map(String).join('/')}`,
            detail: issue.message,
          })),
        });
      }
      const signal = AbortSignal.any([abortOnDisconnect(reply), AbortSignal.timeout(PREVIEW_DEADLINE_MS)]);
      try {
        const preview = await previewAs(lease.runtime, parsed.data, {
          principalFingerprint: options.principalFingerprint,
          signal,
          ...(options.patternBudget === undefined ? {} : { patternBudget: options.patternBudget }),
        });
        request.log.info(
          { tenant: tenantId, admin: admin.subject, previewed: preview.principalFingerprint, from: preview.from },
          'admin preview',
        );
        return reply.code(200).type('application/json').send(preview);
      } catch (error) {
        if (error instanceof PreviewInputError) {
          return problem(reply, 422, error.message, {
            errors: [{ pointer: `#/${error.field}`, detail: error.message }],
          });
        }
        if (signal.aborted) return problem(reply, 503, 'The preview did not finish in time; try again');
        throw error;
      }
    } finally {
      lease.release();
    }
  });
};

/** An RFC 9457 problem; `about:blank`, so the title is the status's own phrase (section 4.2.1). */
function problem(reply: FastifyReply, status: number, detail: string, extra: Record<string, unknown> = {}) {
  return reply
    .code(status)
    .type('application/problem+json')
    .send({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...extra });
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
