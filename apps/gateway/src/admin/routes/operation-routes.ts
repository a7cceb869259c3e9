import { connectionTestExamples } from '../admin-examples.js';
import { errorSummary } from '@mcpgw/core';
import type { AdminRoute } from '../admin-route.js';
import { defineAdminRoute } from '../admin-route.js';
import { connectionTestView, entityParams, tenantIdParams, tenantStatusView } from '../admin-schemas.js';
import { requireTenant, tenantView } from '../admin-views.js';
import { AdminProblem } from '../problem.js';
import { scrub, testSourceConnection } from '../source-connection-test.js';
import type { StoredEntity } from '@mcpgw/control-plane';
import type { TenantStatus } from '@mcpgw/tenancy';
import type { AdminDeps } from '../admin-route.js';

/** Every source credential value of the tenant, each replaced wherever it appears in `message`. */
async function scrubber(deps: AdminDeps, tenantId: string, sources: readonly StoredEntity[]) {
  const secrets: Record<string, string>[] = [];
  for (const source of sources) {
    if (source.secretNames.length === 0) continue;
    secrets.push(await deps.store.openSourceSecrets(tenantId, source.name));
  }
  return (message: string) => secrets.reduce((scrubbed, values) => scrub(scrubbed, values), message);
}

/**
 * The registry's status of a tenant with every source credential value
 * replaced in its last error: a driver's message may quote what it was given.
 */
function scrubbedStatus(
  deps: AdminDeps,
  tenantId: string,
  clean: (message: string) => string,
): TenantStatus | undefined {
  const status = deps.tenants.status(tenantId);
  if (status?.lastError === undefined) return status;
  return { ...status, lastError: { ...status.lastError, message: clean(status.lastError.message) } };
}

/** A health detail with credential values replaced. */
function optionalDetail(detail: string | undefined, clean: (message: string) => string): { detail?: string } {
  return detail === undefined ? {} : { detail: clean(detail) };
}

/** A source's health probe in a status answer waits at most this long (as the readiness prober does). */
export const STATUS_PROBE_TIMEOUT_MS = 2_000;

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
      const tenant = await requireTenant(deps, params.tenantId);
      const stored = await deps.store.listEntities(tenant.id, 'source');
      const clean = await scrubber(deps, tenant.id, stored);
      const { revision: _seen, ...status } = scrubbedStatus(deps, tenant.id, clean) ?? {};
      const lease = deps.tenants.acquire(tenant.id);
      try {
        const runtime = lease?.runtime;
        const opened = new Map((runtime?.catalog.sources ?? []).map((source) => [source.id, source]));
        const sources = await Promise.all(
          stored.map(async (entity) => {
            const source = opened.get(entity.name);
            const failed = runtime?.failedSources.get(entity.name);
            const health =
              source === undefined
                ? undefined
                : await source
                    .health(AbortSignal.timeout(STATUS_PROBE_TIMEOUT_MS))
                    .catch(() => ({ ok: false, detail: 'the probe failed or timed out' }));
            const lastError =
              failed === undefined
                ? undefined
                : { message: clean(failed), revision: runtime!.revision, at: status.lastChangeAt ?? entity.updatedAt };
            return {
              name: entity.name,
              serving: source !== undefined && failed === undefined,
              lastChange: entity.updatedAt,
              ...(health === undefined ? {} : { health: { ...health, ...optionalDetail(health.detail, clean) } }),
              ...(lastError === undefined ? {} : { lastError }),
            };
          }),
        );
        return {
          status: 200,
          body: {
            tenant: tenantView(tenant),
            runtime: {
              serving: lease !== undefined,
              revision: tenant.revision,
              ...status,
              upToDate: status.appliedRevision === tenant.revision,
            },
            sources,
          },
        };
      } finally {
        lease?.release();
      }
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
