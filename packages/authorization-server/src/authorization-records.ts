import type { SqlDatabase } from '@mcpgw/control-plane';
import { revokeGrant, type RecordStores } from './store/grant-revocation.js';
import { systemClock, type Clock } from './store/records.js';

/** A client of a tenant's authorization server, as the admin API lists it. */
export interface ConnectedClient {
  readonly clientId: string;
  /** `client_name` of its registration (RFC 7591 section 2), when it gave one. */
  readonly clientName?: string;
  readonly redirectUris: readonly string[];
  /**
   * True for a client registered here (RFC 7591); false for one known only
   * through its grants (a Client ID Metadata Document URL, fetched, not stored).
   */
  readonly registered: boolean;
  /** ISO 8601: registration, or its first grant. */
  readonly createdAt: string;
  /** ISO 8601, to within a few minutes; absent when never used since. */
  readonly lastUsedAt?: string;
}

/** What a user let a client do (an oidc-provider Grant: remembered consent). */
export interface GrantRecord {
  readonly grantId: string;
  readonly accountId: string;
  readonly clientId: string;
  /** Every scope granted, for OpenID Connect and for any resource, sorted. */
  readonly scopes: readonly string[];
  /** The scopes granted per resource indicator (RFC 8707). */
  readonly resources: Readonly<Record<string, readonly string[]>>;
  readonly createdAt: string;
  readonly lastUsedAt?: string;
  readonly expiresAt?: string;
}

export interface GrantFilter {
  readonly accountId?: string;
  readonly clientId?: string;
}

/**
 * The admin API's view of a tenant's authorization server. Every call names
 * its tenant and reaches only that tenant's rows: an id of another tenant's
 * client or grant is simply not found.
 */
export interface AuthorizationRecords {
  listClients(tenantId: string): Promise<ConnectedClient[]>;
  listGrants(tenantId: string, filter?: GrantFilter): Promise<GrantRecord[]>;
  /** Deletes the grant and every token and code issued under it; false when the tenant has no such grant. */
  revokeGrant(tenantId: string, grantId: string): Promise<boolean>;
  /** Deletes the client's registration and every grant of it (with their tokens); false when the tenant knows no such client. */
  deleteClient(tenantId: string, clientId: string): Promise<boolean>;
}

export interface AuthorizationRecordsOptions {
  readonly db: SqlDatabase;
  readonly stores: RecordStores;
  readonly now?: Clock;
}

interface ClientRow {
  id: string;
  payload: { client_name?: unknown; redirect_uris?: unknown };
  created_at: Date | string;
  last_used_at: Date | string | null;
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
  created_at: Date | string;
  last_used_at: Date | string | null;
}

const isoOf = (value: Date | string) => new Date(value).toISOString();
const words = (value: unknown): string[] => (typeof value === 'string' ? value.split(' ').filter(Boolean) : []);
const LIVE = '(expires_at IS NULL OR expires_at > $2::timestamptz)';

function grantRecord(row: GrantRow): GrantRecord {
  const resources: Record<string, string[]> = {};
  for (const [resource, scope] of Object.entries(row.payload.resources ?? {})) resources[resource] = words(scope);
  const scopes = new Set([...words(row.payload.openid?.scope), ...Object.values(resources).flat()]);
  return {
    grantId: row.id,
    accountId: String(row.payload.accountId ?? ''),
    clientId: String(row.payload.clientId ?? ''),
    scopes: [...scopes].sort(),
    resources,
    createdAt: isoOf(row.created_at),
    ...(row.last_used_at === null ? {} : { lastUsedAt: isoOf(row.last_used_at) }),
    ...(typeof row.payload.exp === 'number' ? { expiresAt: new Date(row.payload.exp * 1000).toISOString() } : {}),
  };
}

export function createAuthorizationRecords(options: AuthorizationRecordsOptions): AuthorizationRecords {
  const { db, stores } = options;
  const now = () => new Date((options.now ?? systemClock)()).toISOString();

  const grants = async (tenantId: string, filter: GrantFilter = {}): Promise<GrantRecord[]> => {
    const { rows } = await db.query<GrantRow>(
      `SELECT id, payload, created_at, last_used_at FROM authorization_server_records
        WHERE tenant_id = $1 AND model = 'Grant' AND ${LIVE}
          AND ($3::text IS NULL OR payload->>'accountId' = $3)
          AND ($4::text IS NULL OR payload->>'clientId' = $4)
        ORDER BY created_at, id`,
      [tenantId, now(), filter.accountId ?? null, filter.clientId ?? null],
    );
    return rows.map(grantRecord);
  };

  // Not the store's `find`: an admin looking is not a use of the client or grant.
  const exists = async (tenantId: string, model: string, id: string): Promise<boolean> => {
    const { rows } = await db.query(
      `SELECT 1 FROM authorization_server_records WHERE tenant_id = $1 AND model = $3 AND id = $4 AND ${LIVE}`,
      [tenantId, now(), model, id],
    );
    return rows.length > 0;
  };

  return {
    async listClients(tenantId) {
      const { rows } = await db.query<ClientRow>(
        `SELECT id, payload, created_at, last_used_at FROM authorization_server_records
          WHERE tenant_id = $1 AND model = 'Client' AND ${LIVE} ORDER BY created_at, id`,
        [tenantId, now()],
      );
      const clients: ConnectedClient[] = rows.map((row) => ({
        clientId: row.id,
        ...(typeof row.payload.client_name === 'string' ? { clientName: row.payload.client_name } : {}),
        redirectUris: Array.isArray(row.payload.redirect_uris) ? row.payload.redirect_uris.map(String) : [],
        registered: true,
        createdAt: isoOf(row.created_at),
        ...(row.last_used_at === null ? {} : { lastUsedAt: isoOf(row.last_used_at) }),
      }));
      const registered = new Set(clients.map((client) => client.clientId));
      const unregistered = new Map<string, { createdAt: string; lastUsedAt?: string }>();
      for (const grant of await grants(tenantId)) {
        if (registered.has(grant.clientId)) continue;
        const seen = unregistered.get(grant.clientId);
        const lastUsedAt = [seen?.lastUsedAt, grant.lastUsedAt]
          .filter((at) => at !== undefined)
          .sort()
          .at(-1);
        unregistered.set(grant.clientId, {
          createdAt: seen?.createdAt ?? grant.createdAt,
          ...(lastUsedAt === undefined ? {} : { lastUsedAt }),
        });
      }
      for (const [clientId, seen] of unregistered)
        clients.push({ clientId, redirectUris: [], registered: false, ...seen });
      return clients;
    },
    listGrants: grants,
    async revokeGrant(tenantId, grantId) {
      if (!(await exists(tenantId, 'Grant', grantId))) return false;
      await revokeGrant(stores, tenantId, grantId);
      return true;
    },
    async deleteClient(tenantId, clientId) {
      const registered = await exists(tenantId, 'Client', clientId);
      const ofClient = await grants(tenantId, { clientId });
      for (const grant of ofClient) await revokeGrant(stores, tenantId, grant.grantId);
      if (registered) await stores.sql.destroy(tenantId, 'Client', clientId);
      return registered || ofClient.length > 0;
    },
  };
}
