import type { ApplyReport, ControlPlaneStore } from '@mcpgw/control-plane';
import { applyDeclaredState, declaredTenantFromEntry } from '@mcpgw/control-plane';
import type { GatewayConfig } from '@mcpgw/config';

/**
 * Writes what the bootstrap file (or the built-in demo) declares into the
 * control plane, only what differs: at start and on SIGHUP. The file wins for
 * what it declares and deletes nothing it does not mention; its `$env`
 * references are stored as references, so credentials named that way never
 * reach the database.
 */
export function applyBootstrap(store: ControlPlaneStore, config: GatewayConfig): Promise<ApplyReport> {
  return applyDeclaredState(store, config.declaredTenants.map(declaredTenantFromEntry), {
    actor: { kind: 'bootstrap', subject: config.origin },
  });
}
