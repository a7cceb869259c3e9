import { z } from 'zod';

const stringList = z.array(z.string().min(1)).min(1);

/**
 * Who counts as an admin of a tenant (the admin API, `docs/admin-api.md`):
 * a token from one of the tenant's own issuers that carries any listed
 * scope, any listed group (the issuer's `groupsClaim`) or a listed subject.
 * Within a binding any value suffices (OR); `issuer` narrows it to one of the
 * tenant's issuers. A tenant without bindings has no tenant admins.
 */
const adminRoleBindingShape = {
  /** Only tokens of this issuer (its exact `iss`); absent: any issuer the tenant trusts. */
  issuer: z.string().min(1).optional(),
  scopes: stringList.optional(),
  groups: stringList.optional(),
  subjects: stringList.optional(),
};

const needsAMatcher = {
  message:
    'give at least one of "scopes", "groups" or "subjects": a binding without one would make every caller an admin',
  path: ['scopes'],
};

const hasMatcher = (binding: { scopes?: unknown; groups?: unknown; subjects?: unknown }): boolean =>
  binding.scopes !== undefined || binding.groups !== undefined || binding.subjects !== undefined;

/** One binding as the control plane stores it (keyed by its name). */
export const adminRoleBindingSchema = z.strictObject(adminRoleBindingShape).refine(hasMatcher, needsAMatcher);

/** One binding as the bootstrap file writes it, under a tenant's `adminRoleBindings`. */
export const adminRoleBindingEntrySchema = z
  .strictObject({ name: z.string().min(1), ...adminRoleBindingShape })
  .refine(hasMatcher, needsAMatcher);

export type AdminRoleBinding = z.output<typeof adminRoleBindingSchema>;
