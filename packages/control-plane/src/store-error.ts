/**
 * Why a control-plane write was refused. The admin API maps each code to
 * one HTTP status (RFC 9110): `not_found` 404, `precondition_failed` 412 (a
 * stale If-Match), `conflict` 409 (it exists already, or a write raced).
 * Nothing was changed when one is thrown.
 */
export type StoreErrorCode = 'not_found' | 'precondition_failed' | 'conflict';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}
