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
