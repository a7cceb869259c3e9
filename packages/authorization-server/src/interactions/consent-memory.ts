/**
 * Where consent is remembered beyond one browser session: the Grant an
 * account last gave a client (oidc-provider keeps grants by id only; its
 * session knows the grant of each client only for as long as the session
 * lives). Implemented by the store over its Grant records.
 *
 * The handler checks every id it is given against the Grant itself (it must
 * exist and be this account's for this client), so a grant revoked or
 * expired since simply brings the consent page back.
 */
export interface ConsentMemory {
  /** The id of the Grant `accountId` gave `clientId`, if one is remembered. */
  find(accountId: string, clientId: string): Promise<string | undefined>;
  /** Records that `accountId` consented to `clientId` with the Grant `grantId` (created or extended). */
  remember(accountId: string, clientId: string, grantId: string): Promise<void>;
}
