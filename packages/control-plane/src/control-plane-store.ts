import { listAuditEvents, recordAudit } from './audit-log.js';
import type { AuditEvent, AuditQuery } from './audit-log.js';
import type { SecretBox } from './secret-box.js';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';
import { StoreError } from './store-error.js';
import type { WriteContext } from './write-context.js';

/** NOTIFY channel carrying the id of a tenant whose configuration changed (every replica LISTENs). */
export const CONTROL_PLANE_CHANNEL = 'mcpgw_control_plane';

/** What a tenant owns, each a JSON document in the bootstrap file's shape, keyed by name. */
export type TenantEntityKind = 'issuer' | 'source' | 'grant' | 'admin-role-binding';

const TABLES: Record<TenantEntityKind, string> = {
  issuer: 'issuers',
  source: 'sources',
  grant: 'grants',
  'admin-role-binding': 'admin_role_bindings',
};

export type Document = Record<string, unknown>;

export interface StoredTenant {
  readonly id: string;
  readonly document: Document;
  readonly status: 'active' | 'suspended';
  /** `bootstrap` when GATEWAY_CONFIG declares it (the file wins for what it declares). */
  readonly managedBy: 'bootstrap' | 'api';
  /** The ETag's number: changes with every write to this row. */
  readonly version: number;
  /** Changes with every write to the tenant or anything it owns. */
  readonly revision: number;
  readonly updatedAt: string;
}

export interface StoredEntity {
  readonly kind: TenantEntityKind;
  readonly name: string;
  readonly document: Document;
  readonly version: number;
  /** Sources only: the names of the sealed credentials (never their values). */
  readonly secretNames: readonly string[];
  readonly updatedAt: string;
}

/** Preconditions of a write (the admin API's If-Match / If-None-Match). */
export interface WriteOptions {
  /** The version the writer read; a different current version refuses the write (412). */
  readonly ifVersion?: number;
  /** The entity must not exist yet (409 when it does). */
  readonly create?: boolean;
}

export interface EntityWriteOptions extends WriteOptions {
  /**
   * Sources only. Write-only credentials merged into the source's options at
   * run time: a new object replaces the sealed ones, `null` removes them,
   * absent keeps what is stored (clients never read them back to resend).
   */
  readonly secrets?: Readonly<Record<string, string>> | null;
}

export interface TenantChange {
  readonly document?: Document;
  readonly status?: StoredTenant['status'];
  readonly managedBy?: StoredTenant['managedBy'];
}

export interface ControlPlaneStore {
  listTenants(): Promise<StoredTenant[]>;
  getTenant(id: string): Promise<StoredTenant | undefined>;
  createTenant(context: WriteContext, id: string, change: TenantChange): Promise<StoredTenant>;
  updateTenant(context: WriteContext, id: string, change: TenantChange, options?: WriteOptions): Promise<StoredTenant>;
  /** Removes the tenant and everything it owns; its audit trail stays. */
  deleteTenant(context: WriteContext, id: string, options?: WriteOptions): Promise<void>;
  /** In the order they were first added (a source's place in merged listings). */
  listEntities(tenantId: string, kind: TenantEntityKind): Promise<StoredEntity[]>;
  getEntity(tenantId: string, kind: TenantEntityKind, name: string): Promise<StoredEntity | undefined>;
  putEntity(
    context: WriteContext,
    tenantId: string,
    kind: TenantEntityKind,
    name: string,
    document: Document,
    options?: EntityWriteOptions,
  ): Promise<StoredEntity>;
  deleteEntity(
    context: WriteContext,
    tenantId: string,
    kind: TenantEntityKind,
    name: string,
    options?: WriteOptions,
  ): Promise<void>;
  /** A source's credentials, opened for building its runtime; never for a response. */
  openSourceSecrets(tenantId: string, name: string): Promise<Record<string, string>>;
  /** Every tenant's revision, for reconciliation against what a replica serves. */
  revisions(): Promise<Map<string, number>>;
  auditEvents(tenantId: string, query?: AuditQuery): Promise<AuditEvent[]>;
}

interface TenantRow {
  id: string;
  document: Document;
  status: StoredTenant['status'];
  managed_by: StoredTenant['managedBy'];
  version: number;
  revision: string | number;
  updated_at: Date | string;
}

interface EntityRow {
  name: string;
  document: Document;
  sealed_secrets?: string | null;
  version: number;
  updated_at: Date | string;
}

function toTenant(row: TenantRow): StoredTenant {
  return {
    id: row.id,
    document: row.document,
    status: row.status,
    managedBy: row.managed_by,
    version: row.version,
    revision: Number(row.revision),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

const TENANT_COLUMNS = 'id, document, status, managed_by, version, revision, updated_at';

/** The audit view of a tenant row: what it is, not its counters. */
function auditedTenant(tenant: StoredTenant | undefined): unknown {
  return tenant === undefined
    ? undefined
    : { document: tenant.document, status: tenant.status, managedBy: tenant.managedBy };
}

export interface ControlPlaneStoreOptions {
  readonly db: SqlDatabase;
  readonly secrets: SecretBox;
}

/**
 * Reads and writes the control plane. Every write runs in one transaction
 * with its audit event, the owning tenant's revision bump and a NOTIFY on
 * {@link CONTROL_PLANE_CHANNEL} (delivered at commit, so replicas never see
 * an uncommitted change). Writes to one tenant are serialised by locking its
 * row, so of two writers holding the same version exactly one succeeds.
 */
export function createControlPlaneStore({ db, secrets }: ControlPlaneStoreOptions): ControlPlaneStore {
  const secretsPlace = (tenantId: string, name: string): string => `${tenantId}/${name}`;

  function toEntity(kind: TenantEntityKind, tenantId: string, row: EntityRow): StoredEntity {
    const sealed = row.sealed_secrets ?? null;
    const secretNames =
      sealed === null ? [] : Object.keys(JSON.parse(secrets.open(sealed, secretsPlace(tenantId, row.name))) as object);
    return {
      kind,
      name: row.name,
      document: row.document,
      version: row.version,
      secretNames,
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  }

  function entityColumns(kind: TenantEntityKind): string {
    return `name, document, version, updated_at${kind === 'source' ? ', sealed_secrets' : ''}`;
  }

  async function lockTenant(tx: SqlExecutor, id: string): Promise<StoredTenant> {
    const { rows } = await tx.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1 FOR UPDATE`, [id]);
    const row = rows[0];
    if (row === undefined) throw new StoreError('not_found', `tenant "${id}" does not exist`);
    return toTenant(row);
  }

  async function touchTenant(tx: SqlExecutor, id: string): Promise<void> {
    await tx.query('UPDATE tenants SET revision = revision + 1 WHERE id = $1', [id]);
    await tx.query('SELECT pg_notify($1, $2)', [CONTROL_PLANE_CHANNEL, id]);
  }

  function checkPreconditions(what: string, current: { version: number } | undefined, options: WriteOptions): void {
    if (options.create === true && current !== undefined) throw new StoreError('conflict', `${what} already exists`);
    if (options.ifVersion === undefined) return;
    if (current === undefined) throw new StoreError('not_found', `${what} does not exist`);
    if (current.version !== options.ifVersion) {
      throw new StoreError(
        'precondition_failed',
        `${what} changed since version ${options.ifVersion} (now ${current.version}); read it again and retry`,
      );
    }
  }

  async function selectEntity(
    tx: SqlExecutor,
    tenantId: string,
    kind: TenantEntityKind,
    name: string,
    forUpdate = false,
  ): Promise<EntityRow | undefined> {
    const { rows } = await tx.query<EntityRow>(
      `SELECT ${entityColumns(kind)} FROM ${TABLES[kind]} WHERE tenant_id = $1 AND name = $2${forUpdate ? ' FOR UPDATE' : ''}`,
      [tenantId, name],
    );
    return rows[0];
  }

  const auditedEntity = (entity: StoredEntity | undefined): unknown =>
    entity === undefined
      ? undefined
      : { document: entity.document, ...(entity.kind === 'source' ? { secretNames: entity.secretNames } : {}) };

  return {
    async listTenants() {
      const { rows } = await db.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY id`);
      return rows.map(toTenant);
    },

    async getTenant(id) {
      const { rows } = await db.query<TenantRow>(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toTenant(rows[0]);
    },

    createTenant(context, id, change) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<TenantRow>(
          `INSERT INTO tenants (id, document, status, managed_by) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO NOTHING RETURNING ${TENANT_COLUMNS}`,
          [id, JSON.stringify(change.document ?? {}), change.status ?? 'active', change.managedBy ?? 'api'],
        );
        if (rows[0] === undefined) throw new StoreError('conflict', `tenant "${id}" already exists`);
        const created = toTenant(rows[0]);
        await recordAudit(tx, context, {
          tenantId: id,
          action: 'create',
          targetType: 'tenant',
          targetId: id,
          before: undefined,
          after: auditedTenant(created),
        });
        await tx.query('SELECT pg_notify($1, $2)', [CONTROL_PLANE_CHANNEL, id]);
        return created;
      });
    },

    updateTenant(context, id, change, options = {}) {
      return db.transaction(async (tx) => {
        const before = await lockTenant(tx, id);
        checkPreconditions(`tenant "${id}"`, before, options);
        const { rows } = await tx.query<TenantRow>(
          `UPDATE tenants SET document = $2, status = $3, managed_by = $4, version = version + 1,
                  revision = revision + 1, updated_at = now()
            WHERE id = $1 RETURNING ${TENANT_COLUMNS}`,
          [
            id,
            JSON.stringify(change.document ?? before.document),
            change.status ?? before.status,
            change.managedBy ?? before.managedBy,
          ],
        );
        const after = toTenant(rows[0] as TenantRow);
        await recordAudit(tx, context, {
          tenantId: id,
          action: 'update',
          targetType: 'tenant',
          targetId: id,
          before: auditedTenant(before),
          after: auditedTenant(after),
        });
        await tx.query('SELECT pg_notify($1, $2)', [CONTROL_PLANE_CHANNEL, id]);
        return after;
      });
    },

    deleteTenant(context, id, options = {}) {
      return db.transaction(async (tx) => {
        const before = await lockTenant(tx, id);
        checkPreconditions(`tenant "${id}"`, before, options);
        await tx.query('DELETE FROM tenants WHERE id = $1', [id]);
        await recordAudit(tx, context, {
          tenantId: id,
          action: 'delete',
          targetType: 'tenant',
          targetId: id,
          before: auditedTenant(before),
          after: undefined,
        });
        await tx.query('SELECT pg_notify($1, $2)', [CONTROL_PLANE_CHANNEL, id]);
      });
    },

    async listEntities(tenantId, kind) {
      const { rows } = await db.query<EntityRow>(
        `SELECT ${entityColumns(kind)} FROM ${TABLES[kind]} WHERE tenant_id = $1 ORDER BY ordinal`,
        [tenantId],
      );
      return rows.map((row) => toEntity(kind, tenantId, row));
    },

    async getEntity(tenantId, kind, name) {
      const row = await selectEntity(db, tenantId, kind, name);
      return row === undefined ? undefined : toEntity(kind, tenantId, row);
    },

    putEntity(context, tenantId, kind, name, document, options = {}) {
      return db.transaction(async (tx) => {
        await lockTenant(tx, tenantId);
        const currentRow = await selectEntity(tx, tenantId, kind, name, true);
        const current = currentRow === undefined ? undefined : toEntity(kind, tenantId, currentRow);
        checkPreconditions(`${kind} "${name}"`, current, options);
        if (kind !== 'source' && options.secrets !== undefined) {
          throw new StoreError('conflict', `only sources hold secrets, not a ${kind}`);
        }
        const sealed =
          options.secrets === undefined
            ? (currentRow?.sealed_secrets ?? null)
            : options.secrets === null
              ? null
              : secrets.seal(JSON.stringify(options.secrets), secretsPlace(tenantId, name));
        const table = TABLES[kind];
        const values: unknown[] = [tenantId, name, JSON.stringify(document)];
        if (kind === 'source') values.push(sealed);
        const sealedColumn = kind === 'source' ? ', sealed_secrets' : '';
        const sealedValue = kind === 'source' ? ', $4' : '';
        const sealedUpdate = kind === 'source' ? ', sealed_secrets = excluded.sealed_secrets' : '';
        const { rows } = await tx.query<EntityRow>(
          `INSERT INTO ${table} (tenant_id, name, document${sealedColumn}) VALUES ($1, $2, $3${sealedValue})
           ON CONFLICT (tenant_id, name) DO UPDATE
             SET document = excluded.document${sealedUpdate}, version = ${table}.version + 1, updated_at = now()
           RETURNING ${entityColumns(kind)}`,
          values,
        );
        const after = toEntity(kind, tenantId, rows[0] as EntityRow);
        await recordAudit(tx, context, {
          tenantId,
          action: current === undefined ? 'create' : 'update',
          targetType: kind,
          targetId: name,
          before: auditedEntity(current),
          after: auditedEntity(after),
        });
        await touchTenant(tx, tenantId);
        return after;
      });
    },

    deleteEntity(context, tenantId, kind, name, options = {}) {
      return db.transaction(async (tx) => {
        await lockTenant(tx, tenantId);
        const currentRow = await selectEntity(tx, tenantId, kind, name, true);
        if (currentRow === undefined) throw new StoreError('not_found', `${kind} "${name}" does not exist`);
        const current = toEntity(kind, tenantId, currentRow);
        checkPreconditions(`${kind} "${name}"`, current, options);
        await tx.query(`DELETE FROM ${TABLES[kind]} WHERE tenant_id = $1 AND name = $2`, [tenantId, name]);
        await recordAudit(tx, context, {
          tenantId,
          action: 'delete',
          targetType: kind,
          targetId: name,
          before: auditedEntity(current),
          after: undefined,
        });
        await touchTenant(tx, tenantId);
      });
    },

    async openSourceSecrets(tenantId, name) {
      const row = await selectEntity(db, tenantId, 'source', name);
      if (row === undefined) throw new StoreError('not_found', `source "${name}" does not exist`);
      const sealed = row.sealed_secrets ?? null;
      return sealed === null
        ? {}
        : (JSON.parse(secrets.open(sealed, secretsPlace(tenantId, name))) as Record<string, string>);
    },

    async revisions() {
      const { rows } = await db.query<{ id: string; revision: string | number }>('SELECT id, revision FROM tenants');
      return new Map(rows.map((row) => [row.id, Number(row.revision)]));
    },

    auditEvents(tenantId, query) {
      return listAuditEvents(db, tenantId, query);
    },
  };
}
