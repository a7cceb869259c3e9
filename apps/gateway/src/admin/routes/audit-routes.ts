import type { AdminRoute } from '../admin-route.js';
import { defineAdminRoute } from '../admin-route.js';
import { auditLogPage, auditPage, auditQuery, tenantIdParams } from '@mcpgw/admin';

export const auditRoutes: readonly AdminRoute[] = [
  defineAdminRoute({
    method: 'GET',
    path: '/tenants/{tenantId}/audit',
    operationId: 'listAuditEvents',
    summary: "The tenant's audit log, newest first",
    description:
      'Every write: who (actor), when, from where (client address), what (action, target), before and after, credentials never included. Filters combine (AND); pages follow `nextCursor`.',
    tag: 'Audit',
    access: 'tenant',
    params: tenantIdParams,
    query: auditQuery,
    responses: { 200: { description: 'One page of events', schema: auditPage } },
    async handler({ params, query, deps }) {
      return { status: 200, body: await auditLogPage(deps, params.tenantId, query) };
    },
  }),
];
