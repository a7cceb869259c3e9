import {
  authorizationServerSchema,
  grantSchema,
  issuerSchema,
  slug,
  sourceTtlMsSchema,
  tenantLimitsSchema,
} from '@mcpgw/config';
import { adminRoleBindingSchema } from '@mcpgw/config';
import { AUDIT_ACTIONS } from '@mcpgw/control-plane';
import { SOURCE_FAILURE_REASONS } from '@mcpgw/core';
import { z } from 'zod';

// Every request and response shape of the admin API, in one place: the
// routes validate with these, and the OpenAPI document is generated from them.

export const tenantIdParams = z.strictObject({ tenantId: slug });
export const entityParams = z.strictObject({ tenantId: slug, name: z.string().min(1).max(2048) });

/** A tenant's own settings (the bootstrap file's tenant minus what it owns). */
export const tenantSettingsSchema = z.strictObject({
  name: z.string().min(1).optional(),
  anonymous: z.boolean().optional(),
  auth: z
    .strictObject({
      requiredScopes: z.array(z.string().min(1)).optional(),
      scopesSupported: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  limits: tenantLimitsSchema.optional(),
});

export const createTenantBody = z.strictObject({ id: slug, ...tenantSettingsSchema.shape });

const managedBy = z
  .enum(['bootstrap', 'api'])
  .describe('`bootstrap`: the GATEWAY_CONFIG file declares it and wins for what it declares on its next apply');

export const tenantViewSchema = z.object({
  id: z.string(),
  status: z.enum(['active', 'suspended']),
  managedBy,
  version: z.int().describe('The ETag is this number in quotes'),
  revision: z.int().describe('Changes with every write to the tenant or anything it owns'),
  updatedAt: z.string(),
  settings: z.record(z.string(), z.unknown()),
});

export const tenantList = z.object({ tenants: z.array(tenantViewSchema) });

/** An issuer: the bootstrap file's `auth.issuers[]` entry; its name is its `issuer` (or `development`). */
export const issuerBody = issuerSchema;

/** A grant: the bootstrap file's `grants[]` entry without `name` (the path names it). */
export const grantBody = grantSchema.omit({ name: true });

/** A role binding: who counts as an admin of the tenant. */
export const adminRoleBindingBody = adminRoleBindingSchema;

/**
 * A source: the bootstrap file's `sources[]` entry without `id` (the path
 * names it), plus write-only `secrets`: credentials by option path (dots for
 * nesting, e.g. `credentials.secretAccessKey`), sealed at rest and merged
 * into the options when the source opens. Absent keeps the stored ones,
 * `null` removes them. They are never returned.
 */
export const sourceBody = z.looseObject({
  type: z.string().min(1),
  ttlMs: sourceTtlMsSchema.optional(),
  secrets: z
    .record(
      z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be an option path such as "password" or "a.b"'),
      z.string().min(1),
    )
    .nullable()
    .optional(),
});

export const entityViewSchema = z.object({
  name: z.string(),
  document: z.record(z.string(), z.unknown()),
  version: z.int(),
  updatedAt: z.string(),
  secretNames: z
    .array(z.string())
    .optional()
    .describe('Sources only: which credentials are stored (never their values)'),
  tenantManagedBy: managedBy,
});

export const entityList = z.object({ items: z.array(entityViewSchema) });

const [openIdUpstream, demoUpstream] = authorizationServerSchema.shape.upstream.options;

/**
 * A tenant's hosted authorization server settings: the bootstrap file's
 * `authorizationServer`, its upstream's `clientSecret` write-only (sealed at
 * rest, never returned; absent keeps the stored one, `null` removes it).
 */
export const authorizationServerBody = authorizationServerSchema.extend({
  upstream: z.union([
    openIdUpstream.extend({
      clientSecret: z
        .string()
        .min(1)
        .max(2000)
        .nullable()
        .optional()
        .describe('Write-only: absent keeps the stored secret, null removes it (a public client, PKCE alone)'),
    }),
    demoUpstream,
  ]),
});

export const authorizationServerView = z.object({
  document: z.record(z.string(), z.unknown()).describe('The settings as stored, without the client secret'),
  clientSecretSet: z.boolean().describe('Whether an upstream client secret is stored (never its value)'),
  version: z.int().describe('The ETag is this number in quotes'),
  updatedAt: z.string(),
  writtenBy: z.enum(['operator', 'tenant-admin']),
  tenantManagedBy: managedBy,
});

export const oauthClientParams = z.strictObject({ tenantId: slug, clientId: z.string().min(1).max(2048) });
export const oauthGrantParams = z.strictObject({ tenantId: slug, grantId: z.string().min(1).max(256) });

export const oauthClientView = z.object({
  clientId: z.string().describe('A Client ID Metadata Document URL, or the id issued at registration'),
  kind: z.enum(['metadata-document', 'registered']),
  clientName: z.string().optional().describe('As the client states it (not verified)'),
  redirectUris: z.array(z.string()),
  createdAt: z.string().optional(),
  lastUsedAt: z.string().optional(),
});

export const oauthClientList = z.object({ clients: z.array(oauthClientView) });

export const oauthGrantQuery = z.strictObject({
  subject: z
    .string()
    .min(1)
    .max(500)
    .optional()
    .describe("One user's grants: their account, the sub claim of their tokens"),
  clientId: z.string().min(1).max(2048).optional().describe("One client's grants"),
});

export const oauthGrantView = z.object({
  grantId: z.string(),
  subject: z.string().describe('The user (`sub` of the tokens issued under it)'),
  clientId: z.string(),
  scopes: z.array(z.string()),
  resources: z.array(z.string()).optional(),
  createdAt: z.string().optional(),
  expiresAt: z.string().optional(),
});

export const oauthGrantList = z.object({ grants: z.array(oauthGrantView) });

export const sourceHealthView = z.object({
  name: z.string(),
  serving: z.boolean().describe('Whether the serving runtime has this source open (false when it failed to start)'),
  health: z.object({ ok: z.boolean(), detail: z.string().optional() }).optional(),
  lastChange: z.string().optional().describe('When its stored document last changed'),
  lastError: z
    .object({ message: z.string(), revision: z.int().optional(), at: z.string() })
    .optional()
    .describe('Why this source failed to start in the serving revision (it is served as unavailable)'),
});

export const tenantStatusView = z.object({
  tenant: tenantViewSchema,
  runtime: z.object({
    serving: z.boolean(),
    revision: z.int().describe("The tenant's stored revision"),
    appliedRevision: z
      .int()
      .optional()
      .describe(
        'The newest revision this replica has applied: serving it, or not serving the tenant (lastError says why)',
      ),
    servingRevision: z.int().optional().describe('The revision the serving runtime was built from'),
    lastChangeAt: z.string().optional(),
    lastError: z
      .object({ message: z.string(), revision: z.int().optional(), at: z.string() })
      .optional()
      .describe('Why the applied revision could not be built (the tenant is not served)'),
    upToDate: z.boolean().describe('This replica has applied the stored revision'),
  }),
  sources: z.array(sourceHealthView),
});

export const connectionTestView = z.object({
  ok: z.boolean(),
  reason: z
    .enum(SOURCE_FAILURE_REASONS as [string, ...string[]])
    .optional()
    .describe('When not ok: what to fix (`unavailable`: anything else); the detail says more, never a credential'),
  detail: z.string().optional(),
  elapsedMs: z.int(),
});

export const auditQuery = z.strictObject({
  cursor: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
  targetType: z
    .enum([
      'tenant',
      'issuer',
      'source',
      'grant',
      'admin-role-binding',
      'authorization-server',
      'oauth-client',
      'oauth-grant',
      'identity-assertion',
    ])
    .optional(),
  targetId: z.string().min(1).optional(),
  actor: z.string().min(1).optional().describe("The actor's subject"),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});

export const auditEventView = z.object({
  id: z.string(),
  occurredAt: z.string(),
  actor: z.object({
    kind: z.string(),
    subject: z.string(),
    issuer: z.string().optional(),
    clientId: z.string().optional().describe('The OAuth client an `end-user` or `client` actor acted through'),
  }),
  clientAddress: z.string().nullable(),
  action: z.enum(AUDIT_ACTIONS),
  targetType: z.string(),
  targetId: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});

export const auditPage = z.object({
  events: z.array(auditEventView),
  nextCursor: z.string().optional().describe('Opaque; pass as `cursor` for the next (older) page'),
});

export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.int(),
  detail: z.string(),
  errors: z
    .array(
      z.object({
        detail: z.string(),
        pointer: z.string().optional(),
        parameter: z.string().optional(),
        header: z.string().optional(),
        location: z.string().optional(),
      }),
    )
    .optional(),
});
