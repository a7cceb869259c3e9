import type { AdapterPayload } from 'oidc-provider';

/** Milliseconds since the epoch; injected so tests move time without waiting. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/**
 * The models oidc-provider issues under a grant: `revokeByGrantId` removes
 * each of them (what oidc-provider's own in-memory adapter indexes by grant).
 */
export const GRANT_MEMBER_MODELS: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/**
 * Models that live seconds to hours and are read on the hot steps of a sign-in:
 * kept in Redis when there is one (any replica serves any step), otherwise in
 * the control plane's SQL table like everything else.
 */
export const SHORT_LIVED_MODELS: ReadonlySet<string> = new Set([
  'AuthorizationCode',
  'Interaction',
  'Session',
  'ReplayDetection',
  'PushedAuthorizationRequest',
]);

/**
 * One backend of oidc-provider's records (SQL or Redis), every call scoped by
 * tenant: nothing stored for one tenant is found, consumed or deleted through
 * another's id. Payloads come back as they were stored, with `consumed` (epoch
 * seconds) once consumed.
 */
export interface RecordStore {
  readonly backend: 'sql' | 'redis';
  /** Replaces the record; it disappears after `expiresInSeconds` (none: kept until destroyed). A consumed record stays consumed. */
  upsert(
    tenantId: string,
    model: string,
    id: string,
    payload: AdapterPayload,
    expiresInSeconds?: number,
  ): Promise<void>;
  find(tenantId: string, model: string, id: string): Promise<AdapterPayload | undefined>;
  findByUid(tenantId: string, model: string, uid: string): Promise<AdapterPayload | undefined>;
  findByUserCode(tenantId: string, model: string, userCode: string): Promise<AdapterPayload | undefined>;
  /**
   * Marks the record consumed; true only for the one call, among all
   * replicas, that found it present, unexpired and not yet consumed.
   */
  consume(tenantId: string, model: string, id: string): Promise<boolean>;
  destroy(tenantId: string, model: string, id: string): Promise<void>;
  /**
   * Stores the record only if there is none (or only an expired one): true
   * for the one call, among all replicas, that stored it.
   */
  insertIfAbsent(
    tenantId: string,
    model: string,
    id: string,
    payload: AdapterPayload,
    expiresInSeconds: number,
  ): Promise<boolean>;
  /** Removes the record and returns its payload, to exactly one caller; undefined when absent or expired. */
  take(tenantId: string, model: string, id: string): Promise<AdapterPayload | undefined>;
  /** Removes every record of {@link GRANT_MEMBER_MODELS} issued under the grant (not the Grant itself). */
  revokeByGrantId(tenantId: string, grantId: string): Promise<void>;
  /**
   * Deletes everything of the tenant. SQL rows go with the tenant's row (the
   * foreign keys cascade); Redis keys would otherwise live out their TTLs,
   * and a tenant created again under the same id must not find them.
   */
  forgetTenant(tenantId: string): Promise<void>;
}

/** The payload as stored: `consumed` is kept beside it (a column, a hash field), never inside. */
export function withoutConsumed(payload: AdapterPayload): { stored: AdapterPayload; consumed: number | undefined } {
  const { consumed, ...stored } = payload;
  return { stored, consumed: typeof consumed === 'number' ? consumed : undefined };
}

/** Refuses what no store can keep meaningfully: an empty id, a negative or fractional lifetime. */
export function checkRecord(tenantId: string, model: string, id: string, expiresInSeconds?: number): void {
  if (tenantId === '' || model === '' || id === '') throw new TypeError('a record needs a tenant, a model and an id');
  if (expiresInSeconds !== undefined && !(Number.isFinite(expiresInSeconds) && expiresInSeconds > 0)) {
    throw new TypeError(`a record's lifetime must be a positive number of seconds, got ${expiresInSeconds}`);
  }
}
