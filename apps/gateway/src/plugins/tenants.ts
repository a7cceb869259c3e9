import { countResultLookups } from '@mcpgw/cache';
import type { TenantConfig } from '@mcpgw/config';
import { errorSummary } from '@mcpgw/core';
import fastifyPlugin from 'fastify-plugin';
import { createRuntimeObservers } from '../observability/runtime-observers.js';
import { traceCache } from '../observability/traced-cache.js';
import type { TenantRegistry } from '@mcpgw/tenancy';
import { createTenantRegistry } from '@mcpgw/tenancy';
import type { StoredPlacement, TenantRuntime } from '@mcpgw/tenancy';
import { createTenantRuntime } from '@mcpgw/tenancy';

declare module 'fastify' {
  interface FastifyInstance {
    /** The tenants this replica serves, each swapped atomically when its configuration changes. */
    tenants: TenantRegistry<TenantRuntime>;
    /** Builds the runtime of one stored revision of a tenant (what the control-plane sync swaps in). */
    buildTenantRuntime: (tenant: TenantConfig, stored: StoredPlacement) => Promise<TenantRuntime>;
  }
}

/**
 * Decorates the tenant registry, empty until the control-plane sync fills
 * it, and how a runtime is built: sources observed by the metrics (and
 * traced, when tracing is on), over the shared cache. Closes every runtime
 * with the app.
 */
export const tenantsPlugin = fastifyPlugin(
  async (app) => {
    const { config, sourceFactories, cursors, baseUrls, egress, logger } = app.settings;
    const [baseUrl, ...aliasBaseUrls] = baseUrls;
    const tracing = app.tracing ?? undefined;
    const runtimeOptions = {
      registry: sourceFactories,
      // Lookups traced as child spans of the request, when tracing is on.
      // Result lookups counted for the console's cache hit ratio, and traced as child spans when tracing is on.
      cache: ((counted) => (tracing === undefined ? counted : traceCache(counted, tracing)))(
        countResultLookups(app.gatewayCache, app.tenantTraffic),
      ),
      cursors,
      logger,
      baseUrl,
      aliasBaseUrls,
      hostedIssuerOf: app.hostedIssuerOf,
      egress,
      observe: createRuntimeObservers(app.metrics, tracing),
    };
    const tenants = createTenantRegistry<TenantRuntime>((tenantId, error) =>
      logger.warn({ tenant: tenantId, err: errorSummary(error) }, 'closing a retired tenant runtime failed'),
    );
    app.decorate('tenants', tenants);
    app.decorate('buildTenantRuntime', (tenant: TenantConfig, stored: StoredPlacement) =>
      createTenantRuntime(tenant, config.configDir, runtimeOptions, stored),
    );
    app.addHook('onClose', async () => tenants.close());
  },
  {
    name: 'mcpgw-tenants',
    dependencies: [
      'mcpgw-settings',
      'mcpgw-metrics',
      'mcpgw-tracing',
      'mcpgw-cache',
      'mcpgw-traffic',
      'mcpgw-authorization-server',
    ],
  },
);
