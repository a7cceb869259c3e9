import { z } from 'zod';

/**
 * `POST /admin/v1/tenants/{tenantId}/preview`: whom to preview. Exactly one
 * of `claims` (mapped as a verified token's claims would be, no signature
 * involved) or `token` (an access token of the tenant's issuer, verified for
 * real: an invalid or expired one is refused, never previewed).
 */
export const previewRequestSchema = z
  .strictObject({
    claims: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('JWT claims of the caller to preview, e.g. {"sub":"alice","scope":"docs:read"}.'),
    issuer: z
      .string()
      .min(1)
      .optional()
      .describe(
        'With `claims`: the trusted issuer whose claim settings map them; required when the tenant trusts several.',
      ),
    token: z
      .string()
      .min(1)
      .max(16_384)
      .optional()
      .describe("An access token issued for the tenant's MCP endpoint; verified exactly as an MCP request's would be."),
  })
  .refine((body) => (body.claims === undefined) !== (body.token === undefined), {
    message: 'Give exactly one of `claims` or `token`',
    path: ['claims'],
  })
  .refine((body) => body.issuer === undefined || body.claims !== undefined, {
    message: '`issuer` applies to `claims` only (a token names its own)',
    path: ['issuer'],
  })
  .meta({ id: 'PreviewRequest' });

export type PreviewRequest = z.infer<typeof previewRequestSchema>;

const grantAllowSchema = z.object({
  source: z.string(),
  uris: z.array(z.string()).optional(),
});

const resourceDescriptorSchema = z
  .object({
    uri: z.string(),
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    mimeType: z.string().optional(),
    size: z.number().optional(),
  })
  .describe('A resource descriptor as `resources/list` returns it; never its contents.');

/** A grant pattern that may be a mistake: it matched nothing, its source could not be listed, or its check ran out of budget. */
export const previewWarningSchema = z.object({
  kind: z.enum(['pattern-matches-nothing', 'source-unavailable', 'check-incomplete']),
  grant: z.string(),
  source: z.string(),
  pattern: z.string().optional(),
  message: z.string(),
});

export type PreviewWarning = z.infer<typeof previewWarningSchema>;

export const previewResponseSchema = z
  .object({
    tenantId: z.string(),
    revision: z
      .int()
      .describe(
        "The revision of the tenant's configuration the preview was computed at: the one this replica serves (as the tenant status's `servingRevision`).",
      ),
    storedRevision: z
      .int()
      .optional()
      .describe("The tenant's stored revision when the preview finished (as the tenant status's `revision`)."),
    upToDate: z
      .boolean()
      .optional()
      .describe(
        'False when the preview was computed at an older revision than the stored one: a write this replica has not applied yet is not in it; preview again shortly.',
      ),
    from: z
      .enum(['claims', 'token', 'anonymous'])
      .describe("What was previewed; 'anonymous' for a tenant without auth."),
    principal: z
      .object({
        issuer: z.string(),
        subject: z.string(),
        clientId: z.string().optional(),
        scopes: z.array(z.string()),
        groups: z.array(z.string()),
      })
      .optional(),
    principalFingerprint: z
      .string()
      .optional()
      .describe(
        "The caller's fingerprint within this tenant, as the access log writes it in `tenantPrincipal` on this tenant's lines, to find their requests.",
      ),
    backendIdentities: z
      .array(
        z.object({
          source: z.string(),
          identity: z
            .record(z.string(), z.unknown())
            .describe(
              "What the source would act as for this caller (a Postgres source's `callerIdentity`: the database role, the `mcpgw.*` settings and the `application_name` its sessions carry; or why it refuses them).",
            ),
        }),
      )
      .optional()
      .describe(
        "For each source that answers under the caller's own backend identity: that identity. Absent when no source does.",
      ),
    admitted: z.boolean().describe('False when an MCP request of this caller would be refused (403).'),
    missingScopes: z.array(z.string()).optional().describe('Required scopes of the tenant the caller lacks.'),
    grants: z.object({
      matched: z.array(z.object({ name: z.string(), allow: z.array(grantAllowSchema) })),
      unmatched: z.array(z.string()),
    }),
    resources: z.object({
      items: z.array(resourceDescriptorSchema).describe('The first page of `resources/list` for this caller.'),
      hasMore: z
        .boolean()
        .describe('Whether a next page exists (its cursor is bound to the caller, so none is given).'),
      unavailableSources: z.array(z.string()),
      incompleteSources: z.array(z.string()),
    }),
    warnings: z.array(previewWarningSchema),
  })
  .meta({ id: 'PreviewResponse' });

export type PreviewResponse = z.infer<typeof previewResponseSchema>;
