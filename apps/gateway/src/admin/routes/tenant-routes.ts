import {
  createTenantBody,
  createTenantExamples,
  etagOf,
  requireTenant,
  tenantIdParams,
  tenantList,
  tenantSettingsExamples,
  tenantSettingsSchema,
  tenantView,
  tenantViewSchema,
  writeOptions,
} from '@mcpgw/admin';
import type { AdminRoute } from '../admin-route.js';
import { defineAdminRoute } from '../admin-route.js';
import { checkTenantWrite, importSettings, writerOf } from '@mcpgw/control-plane';

const TAG = 'Tenants';
const tenantResponse = { description: 'The tenant', schema: tenantViewSchema, etag: true };

const setStatus = (status: 'active' | 'suspended', operationId: string, summary: string, description: string) =>
  defineAdminRoute({
    method: 'POST',
    path: `/tenants/{tenantId}/${status === 'active' ? 'resume' : 'suspend'}`,
    operationId,
    summary,
    description,
    tag: TAG,
    access: 'operator',
    params: tenantIdParams,
    conditional: 'if-match-optional',
    responses: { 200: tenantResponse },
    async handler({ params, deps, preconditions, writeContext }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const options = preconditions.ifVersion === undefined ? {} : { ifVersion: preconditions.ifVersion };
      const updated =
        tenant.status === status && options.ifVersion === undefined
          ? tenant
          : await deps.store.updateTenant(writeContext, tenant.id, { status }, options);
      return { status: 200, body: tenantView(updated), etag: etagOf(updated.version) };
    },
  });

/** Operators: tenants' life cycle. Tenant admins: read their own tenant. */
export const tenantRoutes: readonly AdminRoute[] = [
  defineAdminRoute({
    method: 'GET',
    path: '/tenants',
    operationId: 'listTenants',
    summary: 'List every tenant',
    tag: TAG,
    access: 'operator',
    responses: { 200: { description: 'Every tenant, by id', schema: tenantList } },
    async handler({ deps }) {
      return { status: 200, body: { tenants: (await deps.store.listTenants()).map(tenantView) } };
    },
  }),
  defineAdminRoute({
    method: 'POST',
    path: '/tenants',
    operationId: 'createTenant',
    summary: 'Create a tenant',
    description:
      'Creates an empty tenant with its own settings. It is served once it has an issuer (or is anonymous) and a source.',
    tag: TAG,
    access: 'operator',
    body: createTenantBody,
    examples: createTenantExamples,
    responses: { 201: tenantResponse },
    async handler({ body, deps, writeContext }) {
      const { id, ...written } = body;
      const settings = importSettings(written, writerOf(writeContext));
      const created = await deps.store.createTenant(
        writeContext,
        id,
        { document: settings },
        { check: (reads) => checkTenantWrite(deps, reads, id, { kind: 'settings' }) },
      );
      return { status: 201, body: tenantView(created), etag: etagOf(created.version) };
    },
  }),
  defineAdminRoute({
    method: 'GET',
    path: '/tenants/{tenantId}',
    operationId: 'getTenant',
    summary: "Read a tenant's settings and state",
    tag: TAG,
    access: 'tenant',
    params: tenantIdParams,
    responses: { 200: tenantResponse },
    async handler({ params, deps }) {
      const tenant = await requireTenant(deps, params.tenantId);
      return { status: 200, body: tenantView(tenant), etag: etagOf(tenant.version) };
    },
  }),
  defineAdminRoute({
    method: 'PUT',
    path: '/tenants/{tenantId}',
    operationId: 'replaceTenantSettings',
    summary: "Replace a tenant's own settings (name, auth settings, limits)",
    tag: TAG,
    access: 'operator',
    params: tenantIdParams,
    body: tenantSettingsSchema,
    examples: tenantSettingsExamples,
    conditional: 'if-match-required',
    responses: { 200: tenantResponse },
    async handler({ params, body, deps, preconditions, writeContext }) {
      const tenant = await requireTenant(deps, params.tenantId);
      const options = writeOptions(preconditions, tenant, `tenant "${tenant.id}"`);
      const settings = importSettings(body, writerOf(writeContext));
      const updated = await deps.store.updateTenant(
        writeContext,
        tenant.id,
        { document: settings },
        { ...options, check: (reads) => checkTenantWrite(deps, reads, tenant.id, { kind: 'settings' }) },
      );
      return { status: 200, body: tenantView(updated), etag: etagOf(updated.version) };
    },
  }),
  setStatus(
    'suspended',
    'suspendTenant',
    'Suspend a tenant',
    'Stops serving it on every replica (its MCP endpoint answers 404); what it holds is kept.',
  ),
  setStatus('active', 'resumeTenant', 'Resume a suspended tenant', 'Serves it again on every replica.'),
  defineAdminRoute({
    method: 'DELETE',
    path: '/tenants/{tenantId}',
    operationId: 'deleteTenant',
    summary: 'Delete a tenant and everything it holds',
    description: 'Its audit log is kept. A tenant the bootstrap file declares comes back on its next apply.',
    tag: TAG,
    access: 'operator',
    params: tenantIdParams,
    conditional: 'if-match-required',
    responses: { 204: { description: 'Deleted' } },
    async handler({ params, deps, preconditions, writeContext }) {
      const tenant = await requireTenant(deps, params.tenantId);
      await deps.store.deleteTenant(
        writeContext,
        tenant.id,
        writeOptions(preconditions, tenant, `tenant "${tenant.id}"`),
      );
      return { status: 204 };
    },
  }),
];
