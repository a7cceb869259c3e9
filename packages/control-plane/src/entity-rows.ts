import { recordAudit } from './audit-log.js';
import type { EntitySecrets } from './source-secrets.js';
import type { SqlDatabase, SqlExecutor } from './sql-database.js';
import { StoreError } from './store-error.js';
import { lockTenant, touchTenant, type Document } from './tenant-rows.js';
import type { CheckedWriteOptions, ControlPlaneReads, ReadsIn } from './write-check.js';
import type { WriteContext } from './write-context.js';
import { checkPreconditions } from './write-preconditions.js';

/**
 * What a tenant owns, each a JSON document in the bootstrap file's shape,
 * keyed by name. `authorization-server` is a singleton: at most one per
 * tenant, named {@link AUTHORIZATION_SERVER_NAME}.
 */
export type TenantEntityKind = 'issuer' | 'source' | 'grant' | 'admin-role-binding' | 'authorization-server';

/** The kinds that hold sealed credentials beside their document. */
export type SealedEntityKind = 'source' | 'authorization-server';

/** The one name of a tenant's authorization server settings (the table allows no other). */
export const AUTHORIZATION_SERVER_NAME = 'default';

const TABLES: Record<TenantEntityKind, string> = {
  issuer: 'issuers',
  source: 'sources',
  grant: 'grants',
  'admin-role-binding': 'admin_role_bindings',
  'authorization-server': 'authorization_servers',
};

/** The sealers of the kinds with credentials, each bound to its own place. */
export type KindSecrets = Readonly<Record<SealedEntityKind, EntitySecrets>>;

const isSealed = (kind: TenantEntityKind): kind is SealedEntityKind =>
  kind === 'source' || kind === 'authorization-server';

export interface StoredEntity {
  readonly kind: TenantEntityKind;
  readonly name: string;
  readonly document: Document;
  readonly version: number;
  /** Sources and the authorization server only: the names of the sealed credentials (never their values). */
  readonly secretNames: readonly string[];
  readonly updatedAt: string;
  /**
   * Who wrote it last: a tenant admin's entries are held to the egress
   * policy, operators' (bootstrap file, operator admin calls) are not.
   */
  readonly writtenBy: EntityWriter;
}

/** An operator (the bootstrap file counts as one) or a tenant admin. */
export type EntityWriter = 'operator' | 'tenant-admin';

/** The writer an actor records: only a tenant admin's writes are a tenant admin's. */
export const writerOf = (context: WriteContext): EntityWriter =>
  context.actor.kind === 'tenant-admin' ? 'tenant-admin' : 'operator';

export interface EntityWriteOptions extends CheckedWriteOptions {
  /**
   * Sources only. Write-only credentials merged into the source's options at
   * run time: a new object replaces the sealed ones, `null` removes them,
   * absent keeps what is stored (clients never read them back to resend).
   */
  readonly secrets?: Readonly<Record<string, string>> | null;
  /**
   * Works out what is stored, inside the write's transaction once the
   * tenant is locked and the preconditions hold (the tenant model's
   * importer): the document and the secrets, from the entity it replaces.
   * Throwing rolls the write back. Without it, `document` and `secrets` are stored as given.
   */
  readonly prepare?: (reads: ControlPlaneReads, current: StoredEntity | undefined) => Promise<PreparedEntity>;
  /**
   * Runs the whole write (lock, preconditions, `prepare`, the row written,
   * `check`) and rolls it back instead of committing: the refusal the write
   * would meet is thrown as it would be, and nothing is stored, audited or
   * revised. What would have been stored is answered.
   */
  readonly dryRun?: boolean;
}

/** Thrown out of a dry run's transaction to roll it back, with what it would have stored. */
class DryRunRollback extends Error {
  constructor(readonly entity: StoredEntity) {
    super('dry run rolled back');
  }
}

/** What a write's `prepare` decided to store. */
export interface PreparedEntity {
  readonly document: Document;
  /** As EntityWriteOptions.secrets: undefined keeps the sealed ones, null removes them. */
  readonly secrets?: Readonly<Record<string, string>> | null | undefined;
}

interface EntityRow {
  name: string;
  document: Document;
  sealed_secrets?: string | null;
  version: number;
  updated_at: Date | string;
  written_by: EntityWriter;
}

function entityColumns(kind: TenantEntityKind): string {
  return `name, document, version, updated_at, written_by${isSealed(kind) ? ', sealed_secrets' : ''}`;
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

/** The audit view of an entity: its document and, for a kind with credentials, which it has. */
function auditedEntity(entity: StoredEntity | undefined): unknown {
  return entity === undefined
    ? undefined
    : { document: entity.document, ...(isSealed(entity.kind) ? { secretNames: entity.secretNames } : {}) };
}

/** What tenants own (issuers, sources, grants, role bindings, the authorization server); every write bumps the owner's revision. */
export interface EntityRows {
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
    options?: CheckedWriteOptions,
  ): Promise<void>;
  /** A source's credentials, opened for building its runtime; never for a response. */
  openSourceSecrets(tenantId: string, name: string): Promise<Record<string, string>>;
  /** The sealed credentials of the tenant's authorization server ({} when none); never for a response. */
  openAuthorizationServerSecrets(tenantId: string): Promise<Record<string, string>>;
}

function toEntity(secrets: KindSecrets, kind: TenantEntityKind, tenantId: string, row: EntityRow): StoredEntity {
  return {
    kind,
    name: row.name,
    document: row.document,
    version: row.version,
    secretNames: isSealed(kind) ? secrets[kind].names(tenantId, row.name, row.sealed_secrets ?? null) : [],
    updatedAt: new Date(row.updated_at).toISOString(),
    writtenBy: row.written_by,
  };
}

/** The entity reads, through `executor`: the database, or a write's transaction (for its check). */
export function entityReads(
  executor: SqlExecutor,
  secrets: KindSecrets,
): Pick<EntityRows, 'listEntities' | 'getEntity' | 'openSourceSecrets' | 'openAuthorizationServerSecrets'> {
  return {
    async listEntities(tenantId, kind) {
      const { rows } = await executor.query<EntityRow>(
        `SELECT ${entityColumns(kind)} FROM ${TABLES[kind]} WHERE tenant_id = $1 ORDER BY ordinal`,
        [tenantId],
      );
      return rows.map((row) => toEntity(secrets, kind, tenantId, row));
    },

    async getEntity(tenantId, kind, name) {
      const row = await selectEntity(executor, tenantId, kind, name);
      return row === undefined ? undefined : toEntity(secrets, kind, tenantId, row);
    },

    async openSourceSecrets(tenantId, name) {
      const row = await selectEntity(executor, tenantId, 'source', name);
      if (row === undefined) throw new StoreError('not_found', `source "${name}" does not exist`);
      return secrets.source.open(tenantId, name, row.sealed_secrets ?? null);
    },

    async openAuthorizationServerSecrets(tenantId) {
      const name = AUTHORIZATION_SERVER_NAME;
      const row = await selectEntity(executor, tenantId, 'authorization-server', name);
      return secrets['authorization-server'].open(tenantId, name, row?.sealed_secrets ?? null);
    },
  };
}

/** `readsIn` gives each write's check the reads of its own transaction. */
export function createEntityRows(db: SqlDatabase, secrets: KindSecrets, readsIn: ReadsIn): EntityRows {
  const toStored = (kind: TenantEntityKind, tenantId: string, row: EntityRow) => toEntity(secrets, kind, tenantId, row);

  return {
    ...entityReads(db, secrets),

    async putEntity(context, tenantId, kind, name, document, options = {}) {
      const written = db.transaction(async (tx) => {
        await lockTenant(tx, tenantId);
        const currentRow = await selectEntity(tx, tenantId, kind, name, true);
        const current = currentRow === undefined ? undefined : toStored(kind, tenantId, currentRow);
        checkPreconditions(`${kind} "${name}"`, current, options);
        const prepared =
          options.prepare === undefined
            ? { document, secrets: options.secrets }
            : await options.prepare(readsIn(tx), current);
        if (kind === 'authorization-server' && name !== AUTHORIZATION_SERVER_NAME) {
          throw new StoreError('conflict', `a tenant's authorization server is named "${AUTHORIZATION_SERVER_NAME}"`);
        }
        if (!isSealed(kind) && prepared.secrets !== undefined) {
          throw new StoreError('conflict', `only sources and the authorization server hold secrets, not a ${kind}`);
        }
        const sealed =
          prepared.secrets === undefined || !isSealed(kind)
            ? (currentRow?.sealed_secrets ?? null)
            : prepared.secrets === null
              ? null
              : secrets[kind].seal(tenantId, name, prepared.secrets);
        const table = TABLES[kind];
        const values: unknown[] = [tenantId, name, JSON.stringify(prepared.document), writerOf(context)];
        if (isSealed(kind)) values.push(sealed);
        const sealedColumn = isSealed(kind) ? ', sealed_secrets' : '';
        const sealedValue = isSealed(kind) ? ', $5' : '';
        const sealedUpdate = isSealed(kind) ? ', sealed_secrets = excluded.sealed_secrets' : '';
        const { rows } = await tx.query<EntityRow>(
          `INSERT INTO ${table} (tenant_id, name, document, written_by${sealedColumn}) VALUES ($1, $2, $3, $4${sealedValue})
           ON CONFLICT (tenant_id, name) DO UPDATE
             SET document = excluded.document, written_by = excluded.written_by${sealedUpdate}, version = ${table}.version + 1, updated_at = now()
           RETURNING ${entityColumns(kind)}`,
          values,
        );
        const after = toStored(kind, tenantId, rows[0] as EntityRow);
        await options.check?.(readsIn(tx));
        if (options.dryRun === true) throw new DryRunRollback(after);
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
      try {
        return await written;
      } catch (error) {
        if (error instanceof DryRunRollback) return error.entity;
        throw error;
      }
    },

    deleteEntity(context, tenantId, kind, name, options = {}) {
      return db.transaction(async (tx) => {
        await lockTenant(tx, tenantId);
        const currentRow = await selectEntity(tx, tenantId, kind, name, true);
        if (currentRow === undefined) throw new StoreError('not_found', `${kind} "${name}" does not exist`);
        const current = toStored(kind, tenantId, currentRow);
        checkPreconditions(`${kind} "${name}"`, current, options);
        await tx.query(`DELETE FROM ${TABLES[kind]} WHERE tenant_id = $1 AND name = $2`, [tenantId, name]);
        await options.check?.(readsIn(tx));
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
  };
}
