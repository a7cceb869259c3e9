import type { FastifyError, FastifyInstance } from 'fastify';
import { TenantWriteRefusal } from '@mcpgw/control-plane';
import { errorSummary, GatewayError } from '@mcpgw/core';
import { StoreError } from '@mcpgw/control-plane';
import { problemOfStoreError } from '@mcpgw/admin';
import { AdminProblem, overloaded, serverFault } from '@mcpgw/admin';
import { sendProblem } from './send-problem.js';
import { isProblemError, sendProblem as sendOwnProblem } from './sign-in/sign-in-problem.js';

/** Framework refusals (before a handler runs) as problems; undefined for anything else. */
export function fromFramework(error: FastifyError): AdminProblem | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AdminProblem('invalid-request', 'The body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AdminProblem('invalid-request', 'The body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AdminProblem('unsupported-media-type', 'Send request bodies as application/json', [
        { header: 'Content-Type', detail: 'must be application/json' },
      ]);
    default:
      if (error instanceof SyntaxError) return new AdminProblem('invalid-request', 'The body is not valid JSON');
      if (error.statusCode === 429) return new AdminProblem('too-many-requests', 'Too many requests; retry later');
      if (error.statusCode === 503) return overloaded();
      // An authenticator's or hook's own refusal keeps its status (AdminAuthenticator's contract).
      if (error.statusCode === 401) return new AdminProblem('unauthenticated', error.message);
      if (error.statusCode === 403) return new AdminProblem('forbidden', error.message);
      if (error.statusCode === 404) return new AdminProblem('not-found', error.message);
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return new AdminProblem('invalid-request', error.message);
      }
      return undefined;
  }
}

/**
 * Every refusal under `/admin/v1` is an RFC 9457 problem (never the MCP
 * endpoint's JSON-RPC errors); an unexpected error is logged with its cause
 * and answered with a detail that reveals nothing.
 */
export function installAdminErrors(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AdminProblem) return sendProblem(reply, error);
    if (error instanceof StoreError) return sendProblem(reply, problemOfStoreError(error));
    // The tenant model refused a write (nothing was stored): its type and fields as the problem's.
    if (error instanceof TenantWriteRefusal)
      return sendProblem(reply, new AdminProblem(error.type, error.detail, error.errors));
    // An authenticator's refusal that brings its own RFC 9457 body (the browser session's
    // `session-invalid`, its missing-tenant 404) is sent as it is: a page told
    // `session-invalid` on a write knows to sign in again, as on GET .../session.
    if (isProblemError(error)) return sendOwnProblem(reply, error);
    // Load shedding (plugins/load-shedding.ts) set Retry-After already; the body is a problem here, not JSON-RPC.
    if (error instanceof GatewayError && error.code === 'MCPGW_OVERLOADED') {
      return sendProblem(reply, overloaded());
    }
    const framework = fromFramework(error);
    if (framework !== undefined) return sendProblem(reply, framework);
    request.log.error({ err: errorSummary(error) }, 'admin API request failed');
    return sendProblem(reply, serverFault());
  });
  app.setNotFoundHandler((_request, reply) =>
    sendProblem(reply, new AdminProblem('not-found', 'No such admin API route')),
  );
}
