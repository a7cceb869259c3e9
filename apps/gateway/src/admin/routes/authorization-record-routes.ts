import type { AuthorizationRecords } from '@mcpgw/admin';
import {
  AdminProblem,
  oauthClientList,
  oauthClientParams,
  oauthClientView,
  oauthGrantList,
  oauthGrantParams,
  oauthGrantQuery,
  oauthGrantView,
  requireTenant,
  tenantIdParams,
} from '@mcpgw/admin';
import type { AdminDeps, AdminRoute } from '../admin-route.js';
import { defineAdminRoute } from '../admin-route.js';

const BASE = '/tenants/{tenantId}/authorization-server';

/** The records' port, or the 404 of a gateway that keeps none. */
function recordsOf(deps: AdminDeps): AuthorizationRecords {
  if (deps.authorizationRecords === undefined) {
    throw new AdminProblem('not-found', 'This gateway keeps no authorization server records');
  }
  return deps.authorizationRecords;
}

/**
 * Who is connected to the tenant's hosted authorization server and what
 * its users allowed them, and the two ways to end that: revoke one grant
 * (its tokens can no longer be refreshed), or delete a client (its grants
 * with it). Every call names the tenant the path names to the records'
 * port, so another tenant's ids are ids that do not exist here (404). Each
 * removal is audited with what was removed. No If-Match: a grant or client
 * has no version to race on, and removing it twice answers 404.
 */
export const authorizationRecordRoutes: readonly AdminRoute[] = [
  defineAdminRoute({
    method: 'GET',
    path: `${BASE}/clients`,
    operationId: 'listOAuthClients',
    summary: "List the clients connected to the tenant's authorization server",
    tag: 'AuthorizationServer',
    access: 'tenant',
    params: tenantIdParams,
    responses: {
      200: { description: 'Registered clients and metadata-document clients seen', schema: oauthClientList },
    },
    async handler({ params, deps }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const clients = await recordsOf(deps).listClients(tenant.id);
      return { status: 200, body: { clients: clients.map(oauthClientView) } };
    },
  }),
  defineAdminRoute({
    method: 'DELETE',
    path: `${BASE}/clients/{clientId}`,
    operationId: 'deleteOAuthClient',
    summary: 'Delete a connected client, its grants and their tokens',
    description:
      'The client id is percent-encoded in the path (a metadata document client is its URL). A metadata-document client may connect again; a registered one must register again.',
    tag: 'AuthorizationServer',
    access: 'tenant',
    params: oauthClientParams,
    responses: { 204: { description: 'Deleted' } },
    async handler({ params, deps, writeContext }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const removed = await recordsOf(deps).deleteClient(tenant.id, params.clientId);
      if (removed === undefined) throw new AdminProblem('not-found', 'No such client in this tenant');
      await deps.store.recordEvent(writeContext, {
        tenantId: tenant.id,
        action: 'delete',
        targetType: 'oauth-client',
        targetId: removed.clientId,
        before: oauthClientView(removed),
        after: undefined,
      });
      return { status: 204 };
    },
  }),
  defineAdminRoute({
    method: 'GET',
    path: `${BASE}/grants`,
    operationId: 'listOAuthGrants',
    summary: "List what the tenant's users allowed its clients",
    tag: 'AuthorizationServer',
    access: 'tenant',
    params: tenantIdParams,
    query: oauthGrantQuery,
    responses: { 200: { description: 'The grants, by user and client', schema: oauthGrantList } },
    async handler({ params, query, deps }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const grants = await recordsOf(deps).listGrants(tenant.id, {
        ...(query.subject === undefined ? {} : { accountId: query.subject }),
        ...(query.clientId === undefined ? {} : { clientId: query.clientId }),
      });
      return { status: 200, body: { grants: grants.map(oauthGrantView) } };
    },
  }),
  defineAdminRoute({
    method: 'DELETE',
    path: `${BASE}/grants/{grantId}`,
    operationId: 'revokeOAuthGrant',
    summary: "Revoke a user's grant and every token issued under it",
    tag: 'AuthorizationServer',
    access: 'tenant',
    params: oauthGrantParams,
    responses: { 204: { description: 'Revoked' } },
    async handler({ params, deps, writeContext }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const removed = await recordsOf(deps).revokeGrant(tenant.id, params.grantId);
      if (removed === undefined) throw new AdminProblem('not-found', 'No such grant in this tenant');
      await deps.store.recordEvent(writeContext, {
        tenantId: tenant.id,
        action: 'delete',
        targetType: 'oauth-grant',
        targetId: removed.grantId,
        before: oauthGrantView(removed),
        after: undefined,
      });
      return { status: 204 };
    },
  }),
];
