import type { ControlPlaneReads, StoredTenantModel } from '@mcpgw/control-plane';
import { readStoredTenant, servedTenantEntry } from '@mcpgw/control-plane';
import type { TenantConfig } from '@mcpgw/config';
import type { SourceFactory } from '@mcpgw/core';
import type { StoredPlacement } from '../tenant-runtime.js';
import { tenantAdminWritesOf } from './tenant-entries.js';

/** What turning a stored tenant into its runtime needs. */
export interface StoredTenantRuntimeDeps<R> {
  /** The source types: a source is served with the credentials its type declares, no others. */
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  /** Checks the served tenant by the bootstrap file's rules (GatewayConfig.validateTenant). */
  readonly validate: (entry: unknown) => Promise<TenantConfig>;
  /** Builds a runtime; the sources and issuers a tenant admin wrote connect under the egress policy. */
  readonly build: (tenant: TenantConfig, stored: StoredPlacement) => Promise<R>;
}

/**
 * The one function from a stored tenant to its runtime: the tenant as
 * served (servedTenantEntry: credentials merged in by each source type's
 * model), checked by the bootstrap file's rules, built with its revision and
 * what its tenant admins wrote. Every replica's sync and a gateway serving
 * the bootstrap file alone get their runtimes here; the admin preview
 * previews the runtime the registry holds, which came from here.
 */
export async function runtimeOfStoredTenant<R>(
  tenant: StoredTenantModel,
  deps: StoredTenantRuntimeDeps<R>,
): Promise<R> {
  const config = await deps.validate(servedTenantEntry(tenant, deps.sourceFactories));
  return deps.build(config, { revision: tenant.revision, tenantAdminWrites: tenantAdminWritesOf(tenant) });
}

/** A stored tenant that is served: undefined when it does not exist or is suspended (neither is served). */
export async function loadServedTenant(
  reads: ControlPlaneReads,
  tenantId: string,
): Promise<StoredTenantModel | undefined> {
  const tenant = await readStoredTenant(reads, tenantId);
  return tenant?.status === 'active' ? tenant : undefined;
}
