import type { SqlDatabase } from '@mcpgw/control-plane';
import { revokeGrant, type RecordStores } from './store/grant-revocation.js';
import { systemClock, type Clock } from './store/records.js';

// The records the admin API lists and revokes (re-exported by @mcpgw/admin as its port).

/** How a client came to be known: by its Client ID Metadata Document (its id is that URL), or registered (RFC 7591). */
export type ConnectedClientKind = 'metadata-document' | 'registered';

/** A client of a tenant's authorization server, as the admin API lists it (never its secret). */
export interface ConnectedClient {
  readonly clientId: string;
  readonly kind: ConnectedClientKind;
  /** `client_name` of its registration (RFC 7591 section 2), when it gave one. */
  readonly clientName?: string | undefined;
  readonly redirectUris: readonly string[];
  /** ISO 8601: its registration, or for a metadata-document client its first grant. */
  readonly createdAt?: string | undefined;
  /** ISO 8601, to within a few minutes. */
  readonly lastUsedAt?: string | undefined;
}

/** What a user let a client do (an oidc-provider Grant: remembered consent). */
export interface UserGrant {
  readonly grantId: string;
  readonly accountId: string;
  readonly clientId: string;
  /** Every scope granted, for OpenID Connect and for any resource, sorted. */
  readonly scopes: readonly string[];
  /** The resource indicators (RFC 8707) its tokens are for. */
  readonly resources?: readonly string[] | undefined;
  readonly createdAt?: string | undefined;
  readonly expiresAt?: string | undefined;
}

export interface UserGrantFilter {
  readonly accountId?: string | undefined;
  readonly clientId?: string | undefined;
}

/**
 * The admin API's view of a tenant's authorization server. Every call names
 * its tenant and reaches only that tenant's rows: an id of another tenant's
 * client or grant is simply not found, and nothing changes.
 */
export interface AuthorizationRecords {
  listClients(tenantId: string): Promise<readonly ConnectedClient[]>;
  listGrants(tenantId: string, filter: UserGrantFilter): Promise<readonly UserGrant[]>;
  /** Deletes the grant and every token and code issued under it; what was removed, or undefined when there is no such grant. */
  revokeGrant(tenantId: string, grantId: string): Promise<UserGrant | undefined>;
  /** Deletes the client's registration and every grant of it (with their tokens); undefined when the tenant knows no such client. */
  deleteClient(tenantId: string, clientId: string): Promise<ConnectedClient | undefined>;
}

export interface AuthorizationRecordsOptions {
  readonly db: SqlDatabase;
  readonly stores: RecordStores;
  readonly now?: Clock;
}

type Timestamp = Date | string;

interface ClientRow {
  id: string;
  payload: { client_name?: unknown; redirect_uris?: unknown };
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

interface GrantRow {
  id: string;
  payload: {
    accountId?: unknown;
    clientId?: unknown;
    openid?: { scope?: unknown };
    resources?: Record<string, unknown>;
    exp?: unknown;
  };
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

const isoOf = (value: Timestamp) => new Date(value).toISOString();
const words = (value: unknown): string[] => (typeof value === 'string' ? value.split(' ').filter(Boolean) : []);
const LIVE = '(expires_at IS NULL OR expires_at > $2::timestamptz)';

interface GrantSeen extends UserGrant {
  readonly lastUsedAt?: string;
}

function grantOf(row: GrantRow): GrantSeen {
  const resources = Object.entries(row.payload.resources ?? {});
  const scopes = new Set([...words(row.payload.openid?.scope), ...resources.flatMap(([, scope]) => words(scope))]);
  return {
    grantId: row.id,
    accountId: String(row.payload.accountId ?? ''),
    clientId: String(row.payload.clientId ?? ''),
    scopes: [...scopes].sort(),
    ...(resources.length === 0 ? {} : { resources: resources.map(([resource]) => resource).sort() }),
    createdAt: isoOf(row.created_at),
    ...(row.last_used_at === null ? {} : { lastUsedAt: isoOf(row.last_used_at) }),
    ...(typeof row.payload.exp === 'number' ? { expiresAt: new Date(row.payload.exp * 1000).toISOString() } : {}),
  };
}

const publicGrant = ({ lastUsedAt: _lastUsedAt, ...grant }: GrantSeen): UserGrant => grant;

function registeredClient(row: ClientRow): ConnectedClient {
  return {
    clientId: row.id,
    kind: 'registered',
    ...(typeof row.payload.client_name === 'string' ? { clientName: row.payload.client_name } : {}),
    redirectUris: Array.isArray(row.payload.redirect_uris) ? row.payload.redirect_uris.map(String) : [],
    createdAt: isoOf(row.created_at),
    ...(row.last_used_at === null ? {} : { lastUsedAt: isoOf(row.last_used_at) }),
  };
}

/** A client known only through its grants: a Client ID Metadata Document URL (fetched, never stored). */
function metadataDocumentClient(clientId: string, grants: readonly GrantSeen[]): ConnectedClient {
  const createdAt = grants.map((grant) => grant.createdAt ?? '').sort()[0];
  const lastUsedAt = grants
    .map((grant) => grant.lastUsedAt)
    .filter((at) => at !== undefined)
    .sort()
    .at(-1);
  return {
    clientId,
    kind: 'metadata-document',
    redirectUris: [],
    ...(createdAt === undefined || createdAt === '' ? {} : { createdAt }),
    ...(lastUsedAt === undefined ? {} : { lastUsedAt }),
  };
}

export function createAuthorizationRecords(options: AuthorizationRecordsOptions): AuthorizationRecords {
  const { db, stores } = options;
  const now = () => new Date((options.now ?? systemClock)()).toISOString();

  const grants = async (tenantId: string, filter: UserGrantFilter & { grantId?: string } = {}) => {
    const { rows } = await db.query<GrantRow>(
      `SELECT id, payload, created_at, last_used_at FROM authorization_server_records
        WHERE tenant_id = $1 AND model = 'Grant' AND ${LIVE}
          AND ($3::text IS NULL OR payload->>'accountId' = $3)
          AND ($4::text IS NULL OR payload->>'clientId' = $4)
          AND ($5::text IS NULL OR id = $5)
        ORDER BY created_at, id`,
      [tenantId, now(), filter.accountId ?? null, filter.clientId ?? null, filter.grantId ?? null],
    );
    return rows.map(grantOf);
  };
  // Not the store's `find`: an admin looking is not a use of the client.
  const registration = async (tenantId: string, clientId?: string): Promise<ConnectedClient[]> => {
    const { rows } = await db.query<ClientRow>(
      `SELECT id, payload, created_at, last_used_at FROM authorization_server_records
        WHERE tenant_id = $1 AND model = 'Client' AND ${LIVE} AND ($3::text IS NULL OR id = $3)
        ORDER BY created_at, id`,
      [tenantId, now(), clientId ?? null],
    );
    return rows.map(registeredClient);
  };

  return {
    async listClients(tenantId) {
      const clients = await registration(tenantId);
      const registered = new Set(clients.map((client) => client.clientId));
      const byClient = new Map<string, GrantSeen[]>();
      for (const grant of await grants(tenantId)) {
        if (registered.has(grant.clientId)) continue;
        byClient.set(grant.clientId, [...(byClient.get(grant.clientId) ?? []), grant]);
      }
      for (const [clientId, ofClient] of byClient) clients.push(metadataDocumentClient(clientId, ofClient));
      return clients;
    },
    listGrants: async (tenantId, filter) => (await grants(tenantId, filter)).map(publicGrant),
    async revokeGrant(tenantId, grantId) {
      const [grant] = await grants(tenantId, { grantId });
      if (grant === undefined) return undefined;
      await revokeGrant(stores, tenantId, grantId);
      return publicGrant(grant);
    },
    async deleteClient(tenantId, clientId) {
      const [registered] = await registration(tenantId, clientId);
      const ofClient = await grants(tenantId, { clientId });
      if (registered === undefined && ofClient.length === 0) return undefined;
      for (const grant of ofClient) await revokeGrant(stores, tenantId, grant.grantId);
      if (registered !== undefined) await stores.sql.destroy(tenantId, 'Client', clientId);
      return registered ?? metadataDocumentClient(clientId, ofClient);
    },
  };
}
