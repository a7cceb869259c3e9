import type { ClientPolicy } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import type { Configuration } from 'oidc-provider';
import { errors } from '../oidc-provider-module.js';
import type { RegisteredClientStore } from './registered-client-store.js';

type RegistrationFeature = NonNullable<NonNullable<Configuration['features']>['registration']>;

/** `clients.registration`: the switch, the cap, the expiry of unused registrations. */
export type RegistrationPolicy = ClientPolicy['registration'];

const DAY_MS = 24 * 3600 * 1000;

/**
 * A registration refused because the tenant's cap on registered clients is reached. Made when
 * refused, not a class of this module: its base class is oidc-provider's, read on first use.
 */
export function registrationLimitReached(maxClients: number): Error {
  // 403: the request is well formed, this server's policy refuses it (RFC 7591 section 3.2.2 allows other codes).
  return Object.assign(new errors.OIDCProviderError(403, 'access_denied'), {
    name: 'RegistrationLimitReached',
    error_description: `this authorization server has reached its limit of ${maxClients} registered clients; unused registrations expire, or its administrator can raise the limit`,
  });
}

/**
 * `features.registration` (RFC 7591): open registration (no initial access
 * token: MCP clients register on the fly, MCP authorization "Dynamic Client
 * Registration") when enabled; disabled, oidc-provider neither serves nor
 * advertises a `registration_endpoint`. No registration access token: no
 * client reads or updates its registration (RFC 7592).
 *
 * `issueRegistrationAccessToken` is the one hook oidc-provider awaits on
 * every registration before it reads the request into a client, so it does
 * two things there:
 * - the cap: a count, then an insert, so registrations racing at the cap
 *   may pass it by a few; it bounds what one caller can make this server
 *   store, it is not a quota;
 * - the default `token_endpoint_auth_method`: RFC 7591 section 2 makes it
 *   `client_secret_basic`, and oidc-provider decides whether to issue a
 *   secret from the request as sent, so a request without one gets `none`
 *   (this server's default, see clientDefaults) written into it, and no
 *   secret is issued.
 */
export function registrationFeature(
  policy: RegistrationPolicy,
  clients: RegisteredClientStore,
  logger: Logger,
): RegistrationFeature {
  if (!policy.enabled) return { enabled: false };
  return {
    enabled: true,
    initialAccessToken: false,
    async issueRegistrationAccessToken(ctx) {
      const body = ctx.oidc.body as { token_endpoint_auth_method?: unknown } | undefined;
      if (body !== undefined && body.token_endpoint_auth_method === undefined) body.token_endpoint_auth_method = 'none';
      const registered = await clients.count();
      if (registered >= policy.maxClients) {
        logger.debug({ registered, maxClients: policy.maxClients }, 'client registration refused: limit reached');
        throw registrationLimitReached(policy.maxClients);
      }
      return false;
    },
  };
}

/** The instant before which a registered client that has not been used since is deleted. */
export function unusedClientCutoff(policy: RegistrationPolicy, now: number): Date {
  return new Date(now - policy.unusedExpiryDays * DAY_MS);
}

/**
 * Deletes the registered clients unused for `unusedExpiryDays` (the store's
 * sweep calls it on its schedule); resolves to how many went. A client that
 * is deleted registers again the next time it is used, as MCP clients do
 * when their `client_id` is refused.
 */
export async function sweepUnusedClients(
  policy: RegistrationPolicy,
  clients: RegisteredClientStore,
  now: number,
): Promise<number> {
  return clients.deleteUnusedSince(unusedClientCutoff(policy, now));
}
