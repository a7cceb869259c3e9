import type { FastifyRequest } from 'fastify';

/** How an admin request proved who it is. */
export type AdminCredential = 'bearer' | 'session';

/**
 * Who is calling the admin API (`/admin/v1`). Platform operators act on any
 * tenant; a tenant admin acts only on its own tenant and gets 404 for any
 * other, exactly as for a tenant that does not exist.
 */
export type AdminPrincipal =
  | {
      readonly kind: 'operator';
      readonly issuer: string;
      readonly subject: string;
      readonly via: AdminCredential;
    }
  | {
      readonly kind: 'tenant-admin';
      readonly tenantId: string;
      readonly issuer: string;
      readonly subject: string;
      readonly via: AdminCredential;
    };

/**
 * One way of recognising an admin caller (a bearer token, a browser session
 * cookie). The admin API asks each in turn; `undefined` means "not mine, ask
 * the next", a thrown error with a status is a refusal.
 */
export interface AdminAuthenticator {
  authenticate(request: FastifyRequest): Promise<AdminPrincipal | undefined>;
}
