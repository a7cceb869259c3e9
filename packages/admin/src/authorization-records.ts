/*
 * What the admin API needs of a tenant's hosted authorization server's
 * records (packages/authorization-server implements it over its store):
 * the clients connected to it and the grants its users gave them. Every
 * call names the tenant, and an implementation answers only from that
 * tenant's records: a client id or grant id of another tenant is, for this
 * one, an id that does not exist.
 */

/** How a client came to be known: by its Client ID Metadata Document (its id is that URL), or registered (RFC 7591). */
export type ConnectedClientKind = 'metadata-document' | 'registered';

/** A client of the tenant's authorization server, as an admin reviews it (never its secret). */
export interface ConnectedClient {
  readonly clientId: string;
  readonly kind: ConnectedClientKind;
  /** RFC 7591 section 2 `client_name`, as the client states it (not verified). */
  readonly clientName?: string | undefined;
  readonly redirectUris: readonly string[];
  /** ISO 8601. */
  readonly createdAt?: string | undefined;
  /** ISO 8601: the last token issued to it, when known. */
  readonly lastUsedAt?: string | undefined;
}

/** What a user allowed a client (oidc-provider's Grant: remembered consent, and the tokens issued under it). */
export interface UserGrant {
  readonly grantId: string;
  /** The user's account at the tenant's server (the `sub` of the tokens it issues). */
  readonly accountId: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** The resources (RFC 8707) its tokens are for. */
  readonly resources?: readonly string[] | undefined;
  /** ISO 8601. */
  readonly createdAt?: string | undefined;
  /** ISO 8601. */
  readonly expiresAt?: string | undefined;
}

/** Which grants to list: all of the tenant's, or one user's, or one client's, or both. */
export interface UserGrantFilter {
  readonly accountId?: string | undefined;
  readonly clientId?: string | undefined;
}

/**
 * The port to a tenant's authorization server records. `revokeGrant` ends
 * the grant and every token issued under it (RFC 7009 section 2.1: revoking
 * the grant revokes the refresh tokens issued under it, and access tokens
 * can no longer be renewed); `deleteClient` removes the client, its grants
 * and their tokens. Both answer what they removed (the admin API audits it),
 * or undefined when the tenant has no such record (nothing was changed).
 */
export interface AuthorizationRecords {
  listClients(tenantId: string): Promise<readonly ConnectedClient[]>;
  listGrants(tenantId: string, filter: UserGrantFilter): Promise<readonly UserGrant[]>;
  revokeGrant(tenantId: string, grantId: string): Promise<UserGrant | undefined>;
  deleteClient(tenantId: string, clientId: string): Promise<ConnectedClient | undefined>;
}
