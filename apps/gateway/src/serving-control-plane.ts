import type { GatewayConfig } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import { applyBootstrap } from '@mcpgw/tenancy';
import type { ControlPlane } from '@mcpgw/tenancy';
import { openControlPlane } from '@mcpgw/tenancy';

/**
 * The control plane a gateway serves from, ready to build the app on: the
 * store the environment names (Postgres at DATABASE_URL, else PGlite under
 * DATA_DIR), migrated, with the bootstrap file (or the built-in demo)
 * applied to it. Its caller closes it after the app.
 */
export async function openServingControlPlane(config: GatewayConfig, logger: Logger): Promise<ControlPlane> {
  const controlPlane = await openControlPlane(config.env, logger.child({ component: 'control-plane' }));
  try {
    const report = await applyBootstrap(controlPlane.store, config);
    logger.info({ config: config.origin, changes: report.changes }, 'bootstrap applied to the control plane');
    return controlPlane;
  } catch (error) {
    await controlPlane.close().catch(() => undefined);
    throw error;
  }
}
