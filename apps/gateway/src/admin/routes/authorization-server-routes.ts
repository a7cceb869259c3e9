import type { AuthorizationServerSettings } from '@mcpgw/config';
import type { Document, EntityWriteInput } from '@mcpgw/control-plane';
import {
  AUTHORIZATION_SERVER_NAME,
  checkEntityBody,
  checkTenantWrite,
  importEntity,
  writerOf,
} from '@mcpgw/control-plane';
import {
  AdminProblem,
  authorizationServerBody,
  authorizationServerExamples,
  authorizationServerView,
  authorizationServerViewSchema,
  etagOf,
  refuseInternalDestinations,
  requireTenant,
  tenantIdParams,
  writeOptions,
} from '@mcpgw/admin';
import type { AdminRoute } from '../admin-route.js';
import { defineAdminRoute } from '../admin-route.js';

const PATH = '/tenants/{tenantId}/authorization-server';
const KIND = 'authorization-server';
const WHAT = "the tenant's authorization server";
const one = {
  description: "The tenant's authorization server settings",
  schema: authorizationServerViewSchema,
  etag: true,
};
const absent = () => new AdminProblem('not-found', 'This tenant has no hosted authorization server');

/**
 * The tenant's hosted authorization server settings (docs/admin-api.md,
 * "Hosted authorization server"): one per tenant, a tenant admin's to
 * write, imported by the tenant model and checked as the tenant it leaves
 * inside the write's transaction like every entity; its upstream client
 * secret write-only.
 */
export const authorizationServerRoutes: readonly AdminRoute[] = [
  defineAdminRoute({
    method: 'GET',
    path: PATH,
    operationId: 'getAuthorizationServer',
    summary: "Read the tenant's hosted authorization server settings",
    tag: 'AuthorizationServer',
    access: 'tenant',
    params: tenantIdParams,
    responses: { 200: one },
    async handler({ params, deps }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const entity = await deps.store.getEntity(tenant.id, KIND, AUTHORIZATION_SERVER_NAME);
      if (entity === undefined) throw absent();
      return { status: 200, body: authorizationServerView(entity, tenant), etag: etagOf(entity.version) };
    },
  }),
  defineAdminRoute({
    method: 'PUT',
    path: PATH,
    operationId: 'putAuthorizationServer',
    summary: "Create or replace the tenant's hosted authorization server settings",
    description:
      'The bootstrap file\'s `authorizationServer`. `upstream.clientSecret` is write-only (sealed at rest, never returned; absent keeps the stored one while `upstream.issuer` and `upstream.endpoints.token` stay the same, `null` removes it). `upstream: {"demo": true}` is for platform operators on a loopback bind only. A tenant admin\'s upstream and assertion issuers must be public destinations (the egress policy).',
    tag: 'AuthorizationServer',
    access: 'tenant',
    params: tenantIdParams,
    body: authorizationServerBody,
    examples: authorizationServerExamples,
    conditional: 'if-match-or-if-none-match',
    responses: { 200: one, 201: { ...one, description: 'The settings, created' } },
    async handler(call) {
      const { params, deps } = call;
      const tenant = await requireTenant(deps, params.tenantId);
      const input: EntityWriteInput = {
        tenantId: tenant.id,
        kind: KIND,
        name: AUTHORIZATION_SERVER_NAME,
        // As written (validated by the body schema above), as the bootstrap file's entry is stored:
        // the schema's output fills in defaults and turns connector presets into objects it does
        // not itself accept again, so storing it would make the next check refuse the tenant.
        body: call.request.body as Document,
        writer: writerOf(call.writeContext),
      };
      checkEntityBody(input);
      if (input.writer === 'tenant-admin') {
        refuseInternalDestinations(call.body as AuthorizationServerSettings, deps.egress);
      }
      const current = await deps.store.getEntity(tenant.id, KIND, AUTHORIZATION_SERVER_NAME);
      const options = writeOptions(call.preconditions, current, WHAT);
      const stored = await deps.store.putEntity(
        call.writeContext,
        tenant.id,
        KIND,
        AUTHORIZATION_SERVER_NAME,
        input.body,
        {
          ...options,
          prepare: (reads, replaced) => importEntity({ sourceFactories: deps.sourceFactories, reads }, input, replaced),
          check: (reads) => checkTenantWrite(deps, reads, tenant.id, { kind: KIND, name: AUTHORIZATION_SERVER_NAME }),
        },
      );
      return {
        status: current === undefined ? 201 : 200,
        body: authorizationServerView(stored, tenant),
        etag: etagOf(stored.version),
      };
    },
  }),
  defineAdminRoute({
    method: 'DELETE',
    path: PATH,
    operationId: 'deleteAuthorizationServer',
    summary: "Remove the tenant's hosted authorization server",
    description:
      'Its issuer is no longer trusted and its endpoints answer 404; connected clients and grants stay recorded (revoke them first to end their tokens).',
    tag: 'AuthorizationServer',
    access: 'tenant',
    params: tenantIdParams,
    conditional: 'if-match-required',
    responses: { 204: { description: 'Deleted' } },
    async handler({ params, deps, preconditions, writeContext }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const current = await deps.store.getEntity(tenant.id, KIND, AUTHORIZATION_SERVER_NAME);
      if (current === undefined) throw absent();
      const options = writeOptions(preconditions, current, WHAT);
      await deps.store.deleteEntity(writeContext, tenant.id, KIND, AUTHORIZATION_SERVER_NAME, {
        ...options,
        check: (reads) => checkTenantWrite(deps, reads, tenant.id, { kind: KIND, name: AUTHORIZATION_SERVER_NAME }),
      });
      return { status: 204 };
    },
  }),
];
