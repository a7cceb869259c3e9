import type { ControlPlaneStore, SqlDatabase } from '@mcpgw/control-plane';
import type { Logger } from '@mcpgw/core';
import { errorSummary } from '@mcpgw/core';
import {
  createSigningKeyRows,
  generateSigningKey,
  SIGNING_KEYS_CHANNEL,
  type SigningKeySealer,
  type TenantSigningKeys,
} from './signing-keys.js';
import { systemClock, type Clock } from './store/records.js';

const DAY_SECONDS = 24 * 60 * 60;

/**
 * How long a successor key is published before it signs. Every replica
 * rebuilds the tenant's runtime, whose resource server holds the JWKS inline
 * (ADR 0011), when it hears that the keys changed; that takes well under a
 * second, and a replica whose listening connection was down reloads the
 * tenant when it reconnects. Two minutes leaves room for a slow rebuild;
 * the successor signs from the first rotation after that (the hourly tick,
 * or a replica building the tenant's runtime).
 */
export const SUCCESSOR_PUBLICATION_SECONDS = 2 * 60;

export interface SigningKeysOptions {
  readonly db: SqlDatabase;
  /** `createSecretBox(sealedSigningKeyKeys(rootSecrets))`. */
  readonly sealer: SigningKeySealer;
  /** A key that has signed for this long gets a successor. Default 30 days. */
  readonly rotationPeriodSeconds?: number;
  /**
   * How long a retired key stays published: the longest lifetime of anything
   * it signed (access and ID tokens) plus the verifiers' clock tolerance, plus
   * a margin for a replica that signs with it for a moment after retirement,
   * until it hears of the successor. Required: only the caller knows the
   * tenants' token lifetimes.
   */
  readonly retentionSeconds: number;
  readonly now?: Clock;
}

export interface SigningKeys {
  /**
   * The tenant's keys, made on first use and brought up to date (a successor
   * published for an old key, a successor published long enough promoted,
   * retired keys past their retention deleted) before they are returned.
   */
  signingKeysOf(tenantId: string): Promise<TenantSigningKeys>;
  /** Brings one tenant's keys up to date; true when they changed (and replicas were told). */
  rotate(tenantId: string): Promise<boolean>;
  /** {@link rotate} for every tenant that has keys; resolves to those whose keys changed. */
  rotateAll(): Promise<string[]>;
  /** Calls `listener` with a tenant id whenever that tenant's keys change, on any replica. Resolves to a stop function. */
  watch(listener: (tenantId: string) => void): Promise<() => Promise<void>>;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Per-tenant RS256 keys with rotation. One key signs at a time (a unique
 * index holds it so whichever replicas race). When it has signed for the
 * rotation period, a successor is published in the JWKS without signing;
 * once it has been published for {@link SUCCESSOR_PUBLICATION_SECONDS}, it
 * signs and the old key is retired, kept in the JWKS until every token it
 * signed has expired, then deleted. So every replica trusts a key before any
 * replica signs with it. Each change NOTIFYs {@link SIGNING_KEYS_CHANNEL} at
 * commit.
 */
export function createSigningKeys(options: SigningKeysOptions): SigningKeys {
  const { db } = options;
  const now = options.now ?? systemClock;
  const period = (options.rotationPeriodSeconds ?? 30 * DAY_SECONDS) * 1000;
  const retention = options.retentionSeconds * 1000;
  const publication = SUCCESSOR_PUBLICATION_SECONDS * 1000;
  if (!(period > 0)) throw new TypeError('the rotation period of signing keys must be positive');
  if (!(retention >= 0)) throw new TypeError('the retention of retired signing keys must not be negative');
  const rows = createSigningKeyRows(db, options.sealer);

  const rotate = async (tenantId: string): Promise<boolean> => {
    const at = now();
    const keys = await rows.list(tenantId);
    const signing = keys.find((key) => key.signingSince !== undefined && key.retiredAt === undefined);
    const successor = keys.find((key) => key.signingSince === undefined);
    const first = signing === undefined && successor === undefined;
    const due = signing !== undefined && successor === undefined && signing.signingSince! <= at - period;
    const promotable = successor !== undefined && successor.createdAt <= at - publication;
    const expired = keys.some((key) => key.retiredAt !== undefined && key.retiredAt + retention <= at);
    if (!first && !due && !promotable && !expired) return false;
    // Made outside the transaction (an RSA key takes a while); unused if another replica got there first.
    const fresh = first || due ? await generateSigningKey() : undefined;
    return db.transaction(async (tx) => {
      const deleted = await tx.query(
        `DELETE FROM authorization_server_signing_keys
          WHERE tenant_id = $1 AND retired_at IS NOT NULL AND retired_at <= $2::timestamptz`,
        [tenantId, iso(at - retention)],
      );
      let changed = deleted.affectedRows > 0;
      // The tenant's first key signs at once: no token of the tenant exists for a replica to refuse.
      if (first) changed = (await rows.insertSigning(tx, tenantId, fresh!, at)) || changed;
      if (due) changed = (await rows.insertSuccessor(tx, tenantId, fresh!, at, at - period)) || changed;
      if (promotable) changed = (await rows.promoteSuccessor(tx, tenantId, at, at - publication)) || changed;
      if (changed) await tx.query('SELECT pg_notify($1, $2)', [SIGNING_KEYS_CHANNEL, tenantId]);
      return changed;
    });
  };

  return {
    async signingKeysOf(tenantId) {
      if (tenantId === '') throw new TypeError('signing keys belong to a tenant');
      await rotate(tenantId);
      return rows.load(tenantId);
    },
    rotate,
    async rotateAll() {
      const changed: string[] = [];
      for (const tenantId of await rows.tenants()) if (await rotate(tenantId)) changed.push(tenantId);
      return changed;
    },
    watch: (listener) => db.listen(SIGNING_KEYS_CHANNEL, { onNotify: listener }),
  };
}

export interface KeyRotationScheduleOptions {
  readonly keys: SigningKeys;
  /** The control plane's exclusive work: one replica rotates at a time. */
  readonly exclusively: ControlPlaneStore['exclusively'];
  /** How often to look; default hourly (rotation is measured in days, retention in minutes to hours). */
  readonly intervalMs?: number;
  readonly logger: Logger;
}

/** Runs {@link SigningKeys.rotateAll} periodically under exclusive work; returns a stop function. */
export function startKeyRotation(options: KeyRotationScheduleOptions): () => void {
  let running = false;
  const timer = setInterval(
    () => {
      if (running) return;
      running = true;
      options
        .exclusively(() => options.keys.rotateAll())
        .then((changed) => {
          if (changed.length > 0)
            options.logger.info({ tenants: changed }, 'authorization server: signing keys rotated');
        })
        .catch((error: unknown) => {
          options.logger.warn({ error: errorSummary(error) }, 'authorization server: signing key rotation failed');
        })
        .finally(() => {
          running = false;
        });
    },
    options.intervalMs ?? 60 * 60_000,
  );
  timer.unref();
  return () => clearInterval(timer);
}
