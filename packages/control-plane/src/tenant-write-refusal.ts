/**
 * One offending input of a refused write, as the admin API reports it
 * (RFC 9457 section 3.2 extension member `errors`): `pointer` is a JSON
 * Pointer (RFC 6901) into the request body, `parameter` names a path
 * parameter, and `location` is a path into the tenant's whole configuration
 * (the bootstrap file's notation) when the problem lies outside what the
 * write sent.
 */
export interface TenantFieldError {
  readonly detail: string;
  readonly pointer?: string;
  readonly parameter?: string;
  readonly location?: string;
}

/** Why a write was refused: the content is invalid (422), or only an operator may write it (403). */
export type TenantWriteRefusalType = 'validation-failed' | 'forbidden';

/**
 * A write the tenant model refused; thrown inside the write's transaction,
 * so nothing of it was stored. The admin API answers it as the problem
 * `type` with `errors` (docs/admin-api.md, "Problems").
 */
export class TenantWriteRefusal extends Error {
  override readonly name = 'TenantWriteRefusal';
  constructor(
    readonly type: TenantWriteRefusalType,
    readonly detail: string,
    readonly errors: readonly TenantFieldError[] = [],
  ) {
    super(detail);
  }
}
