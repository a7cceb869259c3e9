/*
 * What the admin API needs of a tenant's hosted authorization server's
 * records: the clients connected to it and the grants its users gave them.
 * The authorization server package owns the shapes and implements them over
 * its store (createAuthorizationRecords); every call names the tenant, and
 * an implementation answers only from that tenant's records: a client id or
 * grant id of another tenant is, for this one, an id that does not exist.
 */
export type {
  AuthorizationRecords,
  ConnectedClient,
  ConnectedClientKind,
  UserGrant,
  UserGrantFilter,
} from '@mcpgw/authorization-server';
