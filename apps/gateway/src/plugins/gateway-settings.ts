import type { GatewayConfig } from '@mcpgw/config';
import type { EgressGuard, Logger, ServerKeys, SourceFactory } from '@mcpgw/core';
import { createEgressGuard, createServerKeys } from '@mcpgw/core';
import { createCacheKeys } from '@mcpgw/cache';
import type { CursorCodec } from '@mcpgw/protocol';
import { createCursorCodec, reuseSealedCursors } from '@mcpgw/protocol';
import fastifyPlugin from 'fastify-plugin';
import { createBaseUrlResolver, publicBaseUrls } from '@mcpgw/tenancy';
import { createSourceRegistry } from '../source-registry.js';
import { createTenantIdentityTokens } from '../tenant-identity-tokens.js';

/** What every subsystem reads of the deployment: the configuration and what is derived from it once. */
export interface GatewaySettings {
  readonly config: GatewayConfig;
  /** The source types this gateway serves. */
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  /** One key per purpose, derived from SECRETS_KEY (else from a random secret of this process). */
  readonly keys: ServerKeys;
  readonly cursors: CursorCodec;
  /** publicBaseUrls: the canonical one first, then the loopback names of a loopback bind. */
  readonly baseUrls: readonly [string, ...string[]];
  /** The base URL a request's Host names (one of `baseUrls`, else the canonical one). */
  readonly baseUrlOf: (host: string | undefined) => string;
  /** Where what tenant admins configure may connect (EGRESS_ALLOW, docs/configuration.md, "Egress policy"). */
  readonly egress: EgressGuard;
  /** The app's logger, as the framework-free packages take it. */
  readonly logger: Logger;
  /**
   * How every Redis key names a tenant: its keyed tag (HMAC of the id under
   * the cache key, cache-keys.ts), never the id in the clear. One function for
   * the rate limits, the traffic counters, the access record and the hosted
   * authorization servers' records, so they share its memo.
   */
  readonly tenantTag: (tenantId: string) => string;
}

declare module 'fastify' {
  interface FastifyInstance {
    settings: GatewaySettings;
  }
}

export interface GatewaySettingsOptions {
  config: GatewayConfig;
  /**
   * Source factories; defaults to every type this build ships, S3 caller
   * identity signing with the keys of the tenant's hosted authorization server.
   */
  sourceFactories?: ReadonlyMap<string, SourceFactory> | undefined;
}

/** Decorates `app.settings`, read by every plugin registered after it. */
export const gatewaySettingsPlugin = fastifyPlugin<GatewaySettingsOptions>(
  async (app, { config, sourceFactories }) => {
    const logger = app.log as unknown as Logger;
    const keys = createServerKeys({
      secretsKey: config.env.SECRETS_KEY,
      previousSecretsKey: config.env.SECRETS_KEY_PREVIOUS,
    });
    if (keys.ephemeral) {
      logger.warn(
        {},
        'SECRETS_KEY is unset: cursors and cache keys use a random per-process key, so they do not survive a restart or work across replicas',
      );
    }
    const [baseUrl, ...aliasBaseUrls] = publicBaseUrls(config.env) as [string, ...string[]];
    app.decorate('settings', {
      config,
      sourceFactories:
        sourceFactories ??
        createSourceRegistry({
          // The authorization server plugins register after this one, before any source is built (tenants plugin).
          mintIdentityToken: createTenantIdentityTokens({
            signingKeysOf: () => (app.hasDecorator('tenantSigningKeysOf') ? app.tenantSigningKeysOf : undefined),
            baseUrl,
          }),
        }),
      keys,
      cursors: reuseSealedCursors(createCursorCodec({ key: keys.cursor })),
      baseUrls: [baseUrl, ...aliasBaseUrls],
      baseUrlOf: createBaseUrlResolver(config.env),
      egress: createEgressGuard({ allow: config.env.EGRESS_ALLOW }),
      logger,
      tenantTag: createCacheKeys({ key: keys.cacheKey }).tenantTag,
    });
  },
  { name: 'mcpgw-settings' },
);
