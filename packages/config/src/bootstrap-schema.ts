import { z } from 'zod';
import { adminSignInSchema } from './admin-sign-in-schema.js';
import { adminRoleBindingEntrySchema } from './admin-role-binding-schema.js';
import { grantSchema, tenantAuthDraftSchema } from './auth-schema.js';
import { authorizationServerSchema } from './authorization-server-schema.js';

/** Tenant and source ids appear in URLs and URIs: lower-case slugs. */
export const slug = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be a slug: lower-case letters, digits and inner hyphens (at most 63)',
  );

const ttlMs = z.int('must be a whole number of milliseconds').min(0, 'must be 0 (no caching) or more');

/**
 * Per-source freshness: the `ttlMs` the gateway returns, and caches
 * for, on list pages this source shaped (`list`) and on its reads (`read`).
 * Omitted values keep the source type's defaults (60 s and 30 s); 0 disables
 * caching of that kind for the source everywhere.
 */
export const sourceTtlMsSchema = z.strictObject({ list: ttlMs.optional(), read: ttlMs.optional() });

/**
 * A source entry: `id`, `type` and `ttlMs` here; every other key is the
 * source type's own options, validated by that type's schema (see loadBootstrap).
 */
export const sourceEntrySchema = z.looseObject({
  id: slug,
  type: z.string().min(1),
  ttlMs: sourceTtlMsSchema.optional(),
});

const perMinute = z.int('must be a whole number of requests per minute').min(0, 'must be 0 (no limit) or more');

/**
 * A tenant's own limits (docs/operations.md, "Limits and overload"). Omitted
 * keys take the gateway-wide defaults from the environment; 0 turns a limit
 * off. Unlike the defaults, a tenant's own limits apply to loopback callers too.
 */
export const tenantLimitsSchema = z.strictObject({
  /** Requests per minute to this tenant from all its callers together. */
  requestsPerMinute: perMinute.optional(),
  /** Requests per minute from one authenticated caller (issuer and subject). */
  perPrincipalPerMinute: perMinute.optional(),
  /** Requests of this tenant in flight on one replica; more are refused with 503 instead of queueing. */
  maxInFlight: z.int('must be a whole number').min(0, 'must be 0 (no cap) or more').optional(),
});

/** One tenant as the bootstrap file declares it; the control plane stores tenants in this shape too. */
export const tenantSchema = z.strictObject({
  id: slug,
  /** Display name; defaults to the id. */
  name: z.string().min(1).optional(),
  /**
   * No authentication: every caller sees every resource. Development only: the
   * gateway refuses to start with one unless it binds to a loopback address.
   */
  anonymous: z.boolean().default(false),
  /**
   * Who may call: the identity providers this tenant trusts (docs/configuration.md).
   * A served tenant needs at least one, unless it has a hosted authorization
   * server (`authorizationServer`), whose issuer it trusts implicitly
   * (checked with the tenant's other rules, checkTenant).
   */
  auth: tenantAuthDraftSchema.optional(),
  /** What each caller sees; without a matching grant a caller sees nothing. */
  grants: z.array(grantSchema).default([]),
  sources: z.array(sourceEntrySchema).min(1, 'a tenant needs at least one source'),
  /** Rate limits and the in-flight cap; omitted keys take the gateway-wide defaults. */
  limits: tenantLimitsSchema.optional(),
  adminSignIn: adminSignInSchema.optional(),
  /**
   * The tenant's hosted OAuth 2.1 authorization server (docs/configuration.md,
   * `authorizationServer`); `upstream.clientSecret` is written as
   * `{ "$env": "NAME" }`, `upstream: { "demo": true }` only on a loopback bind.
   */
  authorizationServer: authorizationServerSchema.optional(),
  /** Who may manage this tenant through the admin API (docs/admin-api.md); names unique. */
  adminRoleBindings: z
    .array(adminRoleBindingEntrySchema)
    .refine((bindings) => new Set(bindings.map((b) => b.name)).size === bindings.length, 'binding names must be unique')
    .optional(),
});

/**
 * A tenant being set up through the admin API, one write at a time: every
 * rule of a served tenant holds except that it may have no source and no
 * issuer yet. It is served once it has both (or is anonymous and has a source).
 */
export const tenantDraftSchema = tenantSchema.extend({
  sources: z.array(sourceEntrySchema),
});

/** The bootstrap file (docs/configuration.md). */
export const bootstrapSchema = z.strictObject({
  tenants: z.array(tenantSchema).min(1, 'declare at least one tenant'),
});

export type BootstrapDocument = z.output<typeof bootstrapSchema>;
export type TenantEntry = z.output<typeof tenantSchema>;
export type SourceEntry = z.output<typeof sourceEntrySchema>;
export type TenantLimits = z.output<typeof tenantLimitsSchema>;
