import type { ControlPlaneStore, StoredEntity } from '@mcpgw/control-plane';
import type { Source } from '@mcpgw/core';
import type { TenantStatus } from '@mcpgw/tenancy';
import { requireTenant, tenantView } from './admin-views.js';
import { scrub } from './source-connection-test.js';
import type { TenantRuntimeLease } from './tenant-ports.js';

/** A source's health probe in a status answer waits at most this long (as the readiness prober does). */
export const STATUS_PROBE_TIMEOUT_MS = 2_000;

/** What a status report needs of a tenant's serving runtime: its revision, its opened and failed sources. */
export interface StatusRuntime {
  readonly revision: number;
  readonly failedSources: ReadonlyMap<string, string>;
  readonly catalog: { readonly sources: readonly Source[] };
}

/** What a status report reads: the stored tenant and its sources, and this replica's registry. */
export interface TenantStatusDeps {
  readonly store: Pick<ControlPlaneStore, 'getTenant' | 'listEntities' | 'openSourceSecrets'>;
  readonly tenants: {
    status(tenantId: string): TenantStatus | undefined;
    acquire(tenantId: string): TenantRuntimeLease<StatusRuntime> | undefined;
  };
}

/** Every source credential value of the tenant, each replaced wherever it appears in `message`. */
async function scrubber(deps: TenantStatusDeps, tenantId: string, sources: readonly StoredEntity[]) {
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
  deps: TenantStatusDeps,
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

/**
 * A tenant's state on this replica (docs/admin-api.md, "Which revision a replica serves"): the
 * stored tenant, whether this replica serves the stored revision, and each
 * source's health probed now, its last change and why it failed to start;
 * no credential value appears in any message.
 */
export async function tenantStatusReport(deps: TenantStatusDeps, tenantId: string) {
  const tenant = await requireTenant(deps, tenantId);
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
      tenant: tenantView(tenant),
      runtime: {
        serving: lease !== undefined,
        revision: tenant.revision,
        ...status,
        upToDate: status.appliedRevision === tenant.revision,
      },
      sources,
    };
  } finally {
    lease?.release();
  }
}
