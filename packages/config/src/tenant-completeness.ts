/**
 * Which rules a tenant is held to: `served` (the bootstrap file, and every
 * tenant a replica serves), or `being-set-up` (an admin API write, which may
 * leave a tenant without a source or an issuer yet).
 */
export type TenantCompleteness = 'served' | 'being-set-up';
