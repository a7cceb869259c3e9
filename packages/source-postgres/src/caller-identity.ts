import type { BackendIdentity, Principal, SourceCaller } from '@mcpgw/core';
import type { CallerIdentityOptions, CallerSetting } from './postgres-source-options.js';

/**
 * How one caller acts at the database, decided from their verified claims
 * by `callerIdentity` (README.md, "Caller identity"):
 *
 * - `act`: switch to `role` for the transaction and set `settings`
 *   (transaction-local, values bound as parameters);
 * - `refuse`: no mapping entry matched and the default is `refuse`: the
 *   caller sees nothing of the source, and no query runs for them;
 * - `unusable`: a claim the settings would carry cannot reach Postgres as
 *   it is (NUL, an unpaired surrogate, oversized): the caller gets an error
 *   naming why, never a value changed into someone else's.
 */
export type CallerPlan =
  | {
      readonly kind: 'act';
      readonly role: string;
      /** `[name, value]`: the `mcpgw.*` settings, then `application_name`. */
      readonly settings: ReadonlyArray<readonly [string, string]>;
      readonly identity: BackendIdentity;
    }
  | { readonly kind: 'refuse'; readonly identity: BackendIdentity }
  | { readonly kind: 'unusable'; readonly reason: string; readonly identity: BackendIdentity };

/** The setting names, fixed here: no claim ever names a setting. */
const SETTING_NAME: Readonly<Record<CallerSetting, string>> = {
  subject: 'mcpgw.subject',
  groups: 'mcpgw.groups',
  scopes: 'mcpgw.scopes',
  tenant: 'mcpgw.tenant',
  client_id: 'mcpgw.client_id',
};

/**
 * The most bytes one setting value may hold. Claims are bounded by the
 * token verifier already; this keeps a pathological token from making every
 * one of its queries carry a megabyte of settings.
 */
export const MAX_SETTING_BYTES = 8192;

/** Postgres truncates `application_name` to NAMEDATALEN - 1 bytes. */
const MAX_APPLICATION_NAME = 63;

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The caller's plan at source `sourceId`, a pure function of the
 * options and the caller, worked out once per caller object (the catalog
 * passes the same one for as long as their verified token is remembered).
 */
export function createCallerIdentity(
  options: CallerIdentityOptions,
  sourceId: string,
): (caller: SourceCaller | undefined) => CallerPlan {
  const names: readonly CallerSetting[] =
    options.settings === true ? ['subject', 'groups', 'scopes', 'tenant', 'client_id'] : options.settings || [];
  const known = new WeakMap<SourceCaller, CallerPlan>();
  const anonymous = planFor(options, names, sourceId, undefined);
  return (caller) => {
    if (caller === undefined) return anonymous;
    let plan = known.get(caller);
    if (plan === undefined) {
      plan = planFor(options, names, sourceId, caller);
      known.set(caller, plan);
    }
    return plan;
  };
}

function planFor(
  options: CallerIdentityOptions,
  names: readonly CallerSetting[],
  sourceId: string,
  caller: SourceCaller | undefined,
): CallerPlan {
  const principal = caller?.principal;
  const role =
    (principal === undefined ? undefined : options.mapping.find((entry) => matches(entry.match, principal))?.role) ??
    (options.default === 'refuse' ? undefined : options.default.role);
  if (role === undefined) {
    const reason = 'no callerIdentity.mapping entry matches the caller and callerIdentity.default is "refuse"';
    return { kind: 'refuse', identity: { key: JSON.stringify(['refuse']), shown: { refused: true, reason } } };
  }
  const settings: Array<readonly [string, string]> = [];
  for (const name of names) {
    const value = settingValue(name, caller);
    const problem = unrepresentable(value);
    if (problem !== undefined) {
      const reason = `the caller's ${name === 'tenant' ? 'tenant' : name.replace('_', ' ')} ${problem}, so it cannot be passed to Postgres as ${SETTING_NAME[name]}`;
      return { kind: 'unusable', reason, identity: { key: JSON.stringify(['unusable', name]), shown: { reason } } };
    }
    settings.push([SETTING_NAME[name], value]);
  }
  // What the role and the settings are decide what the database answers; the audit name does not.
  const key = JSON.stringify(['act', role, settings]);
  const applicationName = (
    caller === undefined ? `mcpgw:${sourceId}` : `mcpgw:${sourceId}:${caller.fingerprint.slice(0, 16)}`
  ).slice(0, MAX_APPLICATION_NAME);
  return {
    kind: 'act',
    role,
    settings: [...settings, ['application_name', applicationName]],
    identity: { key, shown: { role, settings: Object.fromEntries(settings), applicationName } },
  };
}

/**
 * A setting's value: the claim as it is, or for a list claim its sorted
 * distinct values as a JSON array (`["a","b"]`, unambiguous whatever the
 * values hold; a policy reads it with `current_setting(...)::jsonb`).
 * Absent claims are `''`.
 */
function settingValue(name: CallerSetting, caller: SourceCaller | undefined): string {
  const principal = caller?.principal;
  switch (name) {
    case 'subject':
      return principal?.subject ?? '';
    case 'groups':
      return principal === undefined ? '' : JSON.stringify([...new Set(principal.groups)].sort());
    case 'scopes':
      return principal === undefined ? '' : JSON.stringify([...new Set(principal.scopes)].sort());
    case 'tenant':
      return caller?.tenantId ?? '';
    case 'client_id':
      return principal?.clientId ?? '';
  }
}

/** Why `value` cannot reach Postgres unchanged, if it cannot. */
function unrepresentable(value: string): string | undefined {
  // A text parameter cannot hold NUL; an unpaired surrogate would be sent as U+FFFD, another caller's value.
  if (value.includes('\0')) return 'holds a NUL character';
  if (UNPAIRED_SURROGATE.test(value)) return 'holds an unpaired UTF-16 surrogate';
  if (Buffer.byteLength(value, 'utf8') > MAX_SETTING_BYTES) return `is longer than ${MAX_SETTING_BYTES} bytes`;
  return undefined;
}

type Match = CallerIdentityOptions['mapping'][number]['match'];

/** Like a grant's match: each present matcher needs one value in common; absent ones impose nothing. */
function matches(match: Match, principal: Principal): boolean {
  return (
    anyOf(match.groups, principal.groups) &&
    anyOf(match.scopes, principal.scopes) &&
    anyOf(match.subjects, [principal.subject]) &&
    anyOf(match.clientIds, principal.clientId === undefined ? [] : [principal.clientId])
  );
}

function anyOf(required: readonly string[] | undefined, held: readonly string[]): boolean {
  return required === undefined || required.some((value) => held.includes(value));
}
