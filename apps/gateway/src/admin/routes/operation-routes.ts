import {
  AdminProblem,
  connectionTestExamples,
  connectionTestView,
  entityParams,
  requireTenant,
  tenantIdParams,
  tenantStatusReport,
  tenantStatusView,
  testSourceConnection,
} from '@mcpgw/admin';
import { errorSummary } from '@mcpgw/core';
import type { AdminRoute } from '../admin-route.js';
import { defineAdminRoute } from '../admin-route.js';

/** A tenant's live state, its caches, and trying a source. */
export const operationRoutes: readonly AdminRoute[] = [
  defineAdminRoute({
    method: 'GET',
    path: '/tenants/{tenantId}/status',
    operationId: 'getTenantStatus',
    summary: "The tenant's state on this replica",
    description:
      "Whether this replica has applied the stored revision (`revision`, `appliedRevision`, `upToDate`), why it could not build it if so (the tenant is then not served), and each source's health (probed now, 2 s at most each), last change, and why it failed to start if it did (it is then served as unavailable).",
    tag: 'Operations',
    access: 'tenant',
    params: tenantIdParams,
    responses: { 200: { description: 'The status', schema: tenantStatusView } },
    async handler({ params, deps }) {
      return { status: 200, body: await tenantStatusReport(deps, params.tenantId) };
    },
  }),
  defineAdminRoute({
    method: 'POST',
    path: '/tenants/{tenantId}/cache/flush',
    operationId: 'flushTenantCache',
    summary: "Drop the tenant's cached listings and reads, on every replica",
    tag: 'Operations',
    access: 'tenant',
    params: tenantIdParams,
    responses: { 204: { description: 'Flushed' } },
    async handler({ params, deps, principal, request }) {
      const tenant = await requireTenant(deps, params.tenantId);
      await deps.cache.invalidateTenant(tenant.id);
      deps.logger.info(
        { tenant: tenant.id, actor: principal?.subject, clientAddress: request.ip },
        'tenant caches flushed through the admin API',
      );
      return { status: 204 };
    },
  }),
  defineAdminRoute({
    method: 'POST',
    path: '/tenants/{tenantId}/sources/{name}/test',
    operationId: 'testSourceConnection',
    summary: 'Open a stored source, ask its health, close it',
    description:
      "Opens the source as stored (credentials included) with its type, calls health() and closes it, within 10 s. Nothing is written; the serving runtime is not touched. When it fails, `reason` says what to fix: `authentication-failed`, `no-such-database`, `no-such-bucket`, `connection-refused`, `timeout`, `tls`, `host-not-found`, `egress-refused` or `unavailable` (anything else); `detail` is the driver's message with every credential value redacted.",
    tag: 'Source',
    access: 'tenant',
    params: entityParams,
    responses: {
      200: { description: 'What the probe found', schema: connectionTestView, examples: connectionTestExamples },
    },
    async handler({ params, deps }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const entity = await deps.store.getEntity(tenant.id, 'source', params.name);
      if (entity === undefined) throw new AdminProblem('not-found', `No source "${params.name}" in this tenant`);
      const secrets = await deps.store.openSourceSecrets(tenant.id, params.name);
      try {
        return { status: 200, body: await testSourceConnection(deps, tenant.id, entity, secrets) };
      } catch (error) {
        deps.logger.warn(
          { tenant: tenant.id, source: params.name, err: errorSummary(error) },
          'connection test failed',
        );
        throw error;
      }
    },
  }),
];
