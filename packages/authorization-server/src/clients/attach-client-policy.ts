import type { Logger } from '@mcpgw/core';
import type { KoaContextWithOIDC, Provider } from 'oidc-provider';
import type { RegisteredClientStore } from './registered-client-store.js';
import { redirectUriMatches } from './redirect-uri-rules.js';

/**
 * A client's use is written at most once this often per client and replica:
 * expiry counts in days, and a write per token request would cost more than
 * it tells.
 */
export const CLIENT_USE_WRITE_INTERVAL_MS = 3600 * 1000;

/** Clients whose last write is remembered, per provider; past it the oldest are forgotten (written again on next use). */
const REMEMBERED_CLIENTS = 10_000;

export interface AttachClientPolicyOptions {
  /** The tenant's registered clients (store), whose use is recorded; absent: nothing is recorded. */
  registeredClients?: RegisteredClientStore;
  logger: Logger;
  now?: () => number;
}

/**
 * What the clients policy needs of a created provider, beyond its
 * configuration (the core calls it once per provider):
 *
 * - Redirect URI matching: exact, except an http redirect to 127.0.0.1 or
 *   [::1] may use any port (RFC 8252 section 7.3), for every client.
 *   oidc-provider's own matching gives that leeway to `native` clients
 *   only, and to `localhost` too; its configuration has no hook for it, so
 *   the method of this provider's own Client class is replaced.
 * - Use of registered clients: each successful authorization and token
 *   request touches the client's `lastUsedAt`, so unused registrations can
 *   expire (`unusedExpiryDays`) and used ones never do.
 */
export function attachClientPolicy(provider: Provider, options: AttachClientPolicyOptions): void {
  const { registeredClients, logger } = options;
  const now = options.now ?? Date.now;

  // The class is this provider's own (oidc-provider builds one per Provider), so no other provider changes.
  const prototype = provider.Client.prototype as { redirectUriAllowed(uri: string): boolean };
  prototype.redirectUriAllowed = function redirectUriAllowed(this: { redirectUris?: readonly string[] }, uri: string) {
    return typeof uri === 'string' && redirectUriMatches(this.redirectUris ?? [], uri);
  };

  if (registeredClients === undefined) return;
  const written = new Map<string, number>();
  const touch = (ctx: KoaContextWithOIDC) => {
    const client = ctx.oidc?.client;
    // Metadata document clients are not stored (oidc-provider marks them).
    if (client === undefined || (client as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument === true) {
      return;
    }
    const at = now();
    const last = written.get(client.clientId);
    if (last !== undefined && at - last < CLIENT_USE_WRITE_INTERVAL_MS) return;
    written.delete(client.clientId);
    written.set(client.clientId, at);
    if (written.size > REMEMBERED_CLIENTS) written.delete(written.keys().next().value as string);
    registeredClients.touch(client.clientId, new Date(at)).catch((error: unknown) => {
      // The request it records has succeeded; a lost write only makes the client look older.
      written.delete(client.clientId);
      logger.warn({ clientId: client.clientId, err: error }, 'recording the use of a registered client failed');
    });
  };
  provider.on('authorization.success', touch);
  provider.on('grant.success', touch);
}
