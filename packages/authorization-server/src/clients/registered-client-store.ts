/**
 * What the clients policy needs from the store about the clients registered
 * (RFC 7591) at one tenant's authorization server: the store binds an
 * instance to its tenant. Clients read from metadata documents are never
 * stored, so they are not counted, touched or swept.
 *
 * Contract: a registered client (oidc-provider's `Client` model, written by
 * the adapter's `upsert`) has a `lastUsedAt`, set to its registration time
 * when it is first written; `touch` moves it forward; `deleteUnusedSince`
 * deletes by it.
 */
export interface RegisteredClientStore {
  /** How many clients are registered now. */
  count(): Promise<number>;
  /**
   * Records that `clientId` was used at `usedAt` (an authorization or a
   * token request). An unknown id (a client of the configuration, one
   * already deleted) is no error and changes nothing.
   */
  touch(clientId: string, usedAt: Date): Promise<void>;
  /**
   * Deletes every registered client last used before `cutoff`, with its
   * grants and refresh tokens; resolves to how many clients went.
   */
  deleteUnusedSince(cutoff: Date): Promise<number>;
}
