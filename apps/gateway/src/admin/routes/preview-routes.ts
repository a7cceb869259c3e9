import {
  AdminProblem,
  PreviewRefusal,
  previewExamples,
  previewRequestSchema,
  previewResponseSchema,
  previewTenant,
  tenantIdParams,
} from '@mcpgw/admin';
import { MCP_ROUTE } from '../../mcp-route.js';
import type { AdminRoute } from '../admin-route.js';
import { defineAdminRoute } from '../admin-route.js';

/**
 * "Preview as" (docs/admin-api.md): what an MCP caller with the given claims,
 * or the given token of the tenant's issuer, would see, computed by the same
 * code a real request runs, naming the caller by their fingerprint within the
 * tenant (the access line's `tenantPrincipal`, never its gateway-wide `principal`).
 */
export const previewRoutes: readonly AdminRoute[] = [
  defineAdminRoute({
    method: 'POST',
    path: '/tenants/{tenantId}/preview',
    operationId: 'previewAs',
    summary: 'What an MCP caller with these claims, or this token, would see',
    description:
      "The grants that match, the caller's fingerprint within the tenant, the first page of resource descriptors (never contents), and warnings for grant patterns that match nothing listed in their source; computed at the revision this replica serves (`revision`), with `upToDate` false when the stored revision is newer.",
    tag: 'Operations',
    access: 'tenant',
    params: tenantIdParams,
    body: previewRequestSchema,
    examples: previewExamples,
    responses: { 200: { description: 'The preview', schema: previewResponseSchema } },
    async handler({ params, body, deps, principal, signal }) {
      try {
        const preview = await previewTenant(
          {
            acquire: (id) => deps.tenants.acquire(id),
            mcpPath: (id) => MCP_ROUTE.replace(':tenant', id),
            tenantFingerprint: deps.tenantFingerprint,
          },
          params.tenantId,
          body,
          signal,
        );
        deps.logger.info(
          { tenant: params.tenantId, admin: principal?.subject, previewed: preview.principalFingerprint },
          'admin preview',
        );
        // Read after the preview: a write committed meanwhile shows as a newer stored revision.
        const stored = await deps.store.getTenant(params.tenantId);
        return {
          status: 200,
          body:
            stored === undefined
              ? preview
              : { ...preview, storedRevision: stored.revision, upToDate: preview.revision >= stored.revision },
        };
      } catch (error) {
        if (error instanceof PreviewRefusal) throw new AdminProblem(error.type, error.detail, error.errors);
        throw error;
      }
    },
  }),
];
