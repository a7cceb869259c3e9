import { AuthError, extractBearerToken } from '@mcpgw/auth';
import type { FastifyRequest } from 'fastify';
import type { AdminAccess } from '@mcpgw/admin';
import { AdminProblem } from '@mcpgw/admin';
import type { AdminAuthenticator } from './admin-authenticator.js';

/** The tenant a request's path addresses, if any. */
export const addressedTenant = (request: FastifyRequest): string | undefined => {
  const value = (request.params as { tenantId?: unknown } | undefined)?.tenantId;
  return typeof value === 'string' ? value : undefined;
};

/**
 * API clients: an access token in the Authorization header (RFC 6750
 * section 2.1; never the query string). No header: not ours, the next
 * authenticator (a browser session) may know the caller.
 */
export function createBearerAuthenticator(access: AdminAccess): AdminAuthenticator {
  return {
    async authenticate(request) {
      const tenantId = addressedTenant(request);
      let token: string | undefined;
      try {
        token = extractBearerToken({ rawHeaders: request.raw.rawHeaders, url: request.url, bodyHasAccessToken: false });
      } catch (error) {
        if (!(error instanceof AuthError)) throw error;
        throw new AdminProblem('invalid-request', error.message, [{ header: 'Authorization', detail: error.message }], {
          'www-authenticate': access.challenge(tenantId, { code: 'invalid_request', description: error.message }),
        });
      }
      return token === undefined ? undefined : access.authenticate(tenantId, token, 'bearer');
    },
  };
}
