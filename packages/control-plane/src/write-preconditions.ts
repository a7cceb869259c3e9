import { StoreError } from './store-error.js';

/** Preconditions of a write (the admin API's If-Match / If-None-Match). */
export interface WriteOptions {
  /** The version the writer read; a different current version refuses the write (412). */
  readonly ifVersion?: number;
  /** The entity must not exist yet (409 when it does). */
  readonly create?: boolean;
}

/**
 * Refuses a write whose preconditions the current row fails (RFC 9110
 * section 13.1.1 If-Match, 13.1.2 If-None-Match: *). `what` names the row
 * in the error, e.g. `tenant "acme"`.
 */
export function checkPreconditions(
  what: string,
  current: { version: number } | undefined,
  options: WriteOptions,
): void {
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
