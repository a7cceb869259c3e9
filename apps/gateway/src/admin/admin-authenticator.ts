import type { FastifyRequest } from 'fastify';
import type { AdminPrincipal } from '@mcpgw/admin';

/**
 * One way of recognising an admin caller (a bearer token, a browser session
 * cookie). The admin API asks each in turn; `undefined` means "not mine, ask
 * the next", a thrown error with a status is a refusal.
 */
export interface AdminAuthenticator {
  authenticate(request: FastifyRequest): Promise<AdminPrincipal | undefined>;
}
