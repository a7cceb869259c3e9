import type { AuthorizationServerStorage, SigningKeys } from '@mcpgw/authorization-server';
import {
  createAuthorizationServerStorage,
  createSigningKeys,
  startExpiredRecordSweep,
  startKeyRotation,
  sweepUnusedClients,
} from '@mcpgw/authorization-server';
import { createSecretBox } from '@mcpgw/control-plane';
import { errorSummary, sealedSigningKeyKeys } from '@mcpgw/core';
import type { ControlPlane } from '@mcpgw/tenancy';
import { hostedAuthorizationServerOf, sealingKeys } from '@mcpgw/tenancy';
import fastifyPlugin from 'fastify-plugin';
import type { Cluster, Redis } from 'ioredis';

declare module 'fastify' {
  interface FastifyInstance {
    /** What every tenant's hosted authorization server keeps, shared by the replicas (control plane SQL, Redis). */
    authorizationServerStorage: AuthorizationServerStorage;
    /** Every tenant's signing keys, sealed in the control plane and rotated (docs/adr/0011). */
    authorizationServerSigningKeys: SigningKeys;
  }
}

/**
 * How long a retired signing key stays published: the longest access or ID
 * token lifetime a tenant may set (`tokens.accessTokenSeconds`, at most one
 * hour), the verifiers' clock tolerance, and a margin for a replica that
 * signs with the old key until it hears of its successor.
 */
export const RETIRED_KEY_RETENTION_SECONDS = 3600 + 60 + 300;

/**
 * The command deadline of the store's own Redis client. The shared client's
 * is 50 ms, for callers that degrade when Redis is slow (the cache serves
 * uncached); a sign-in step cannot do without its record, so it waits
 * longer, and still fails at once while Redis is away (no offline queue).
 */
export const STORE_REDIS_COMMAND_TIMEOUT_MS = 2000;

/** How often the registered clients nobody used for `unusedExpiryDays` are looked for. */
const UNUSED_CLIENT_SWEEP_MS = 60 * 60_000;

export interface AuthorizationServerStorePluginOptions {
  controlPlane: ControlPlane;
}

/**
 * Opens the hosted authorization servers' store on the control plane's
 * database (and Redis when REDIS_URL is set) and runs its periodic work,
 * each under the control plane's exclusive work so one replica does it at a
 * time: the expired-record sweep, signing key rotation, and the expiry of
 * unused registered clients of each served tenant.
 */
export const authorizationServerStorePlugin = fastifyPlugin<AuthorizationServerStorePluginOptions>(
  async (app, { controlPlane }) => {
    const { config, logger } = app.settings;
    const redis = app.redis;
    const client = redis === undefined ? undefined : storeClient(redis.client);
    const storage = createAuthorizationServerStorage({
      db: controlPlane.db,
      redis:
        client === undefined || redis === undefined
          ? undefined
          : { client, masters: () => redis.masters(), tenantTag: app.settings.tenantTag },
    });
    const signingKeys = createSigningKeys({
      db: controlPlane.db,
      sealer: createSecretBox(sealedSigningKeyKeys(await sealingKeys(config.env))),
      retentionSeconds: RETIRED_KEY_RETENTION_SECONDS,
    });
    const storeLogger = logger.child({ component: 'authorization-server-store' });
    const exclusively = controlPlane.store.exclusively.bind(controlPlane.store);
    const sweep = startExpiredRecordSweep({ db: controlPlane.db, exclusively, logger: storeLogger });
    const stopRotation = startKeyRotation({ keys: signingKeys, exclusively, logger: storeLogger });

    let sweeping = false;
    const unusedClients = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      exclusively(async () => {
        for (const [tenantId, runtime] of app.tenants.serving) {
          const settings = hostedAuthorizationServerOf(runtime.config);
          if (settings === undefined) continue;
          const deleted = await sweepUnusedClients(
            settings.clients.registration,
            storage.registeredClientsOf(tenantId),
            Date.now(),
          );
          if (deleted > 0) storeLogger.info({ tenant: tenantId, deleted }, 'unused registered clients deleted');
        }
      })
        .catch((error: unknown) =>
          storeLogger.warn({ error: errorSummary(error) }, 'the sweep of unused registered clients failed'),
        )
        .finally(() => {
          sweeping = false;
        });
    }, UNUSED_CLIENT_SWEEP_MS);
    unusedClients.unref();

    app.decorate('authorizationServerStorage', storage);
    app.decorate('authorizationServerSigningKeys', signingKeys);
    app.addHook('onClose', async () => {
      clearInterval(unusedClients);
      sweep.stop();
      stopRotation();
      client?.disconnect();
    });
  },
  { name: 'mcpgw-authorization-server-store', dependencies: ['mcpgw-settings', 'mcpgw-redis'] },
);

/** A connection of the store's own, like the shared command client but with its own deadline. */
function storeClient(shared: Redis | Cluster): Redis | Cluster {
  // ioredis marks a cluster client (`isCluster`); a type test keeps ioredis unloaded without REDIS_URL.
  if (isCluster(shared)) {
    return shared.duplicate(undefined, {
      redisOptions: { ...shared.options.redisOptions, commandTimeout: STORE_REDIS_COMMAND_TIMEOUT_MS },
    });
  }
  return shared.duplicate({ commandTimeout: STORE_REDIS_COMMAND_TIMEOUT_MS });
}

function isCluster(client: Redis | Cluster): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}
