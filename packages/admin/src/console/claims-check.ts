import type { Markup, MarkupValue, Principal } from '@mcpgw/core';
import { markup } from '@mcpgw/core';
import type { GrantMatch, GrantMatcher, UnmetCondition } from '@mcpgw/policy';
import { unmetConditions } from '@mcpgw/policy';
import type { PreviewResponse } from '../preview-schema.js';
import { tenantConsolePath } from './console-paths.js';
import type { PlacedProblem } from './form-problem.js';
import { field, problemSummary, writeFields } from './form-problem.js';

/**
 * The grants page's "Check claims" form and what it answered: the claims (or
 * token) as typed, and the preview of that caller (the `previewAs`
 * operation: the same claims-to-principal mapping and admission an MCP
 * request takes) or the refusal placed next to its field.
 */
export interface ClaimsCheck {
  readonly values: Readonly<Record<string, string>>;
  readonly result?: PreviewResponse;
  readonly placed?: PlacedProblem;
}

/** The form's field names: one prefix, so they never collide with the grant form's own. */
export const CLAIMS_CHECK_FIELDS = {
  claims: 'check.claims',
  issuer: 'check.issuer',
  token: 'check.token',
} as const;

/** What a matcher reads of the caller, in the words the grant's `match` uses. */
const HOLDS: Readonly<Record<GrantMatcher, string>> = {
  scopes: 'scopes',
  groups: 'groups',
  subjects: 'subject',
  clientIds: 'client id',
  issuers: 'issuer',
};

/** The previewed caller as the policy's principal (its expiry plays no part in matching). */
function principalOf(result: PreviewResponse): Principal | undefined {
  const who = result.principal;
  if (who === undefined) return undefined;
  return {
    issuer: who.issuer,
    subject: who.subject,
    ...(who.clientId === undefined ? {} : { clientId: who.clientId }),
    scopes: who.scopes,
    groups: who.groups,
    expiresAt: 0,
  };
}

const listOf = (values: readonly string[]): MarkupValue =>
  values.length === 0
    ? markup`none`
    : values.map((value, index) => markup`${index === 0 ? '' : ', '}<code>${value}</code>`);

function unmetText(condition: UnmetCondition): Markup {
  return markup`<li><code>${condition.matcher}</code> needs one of ${listOf(condition.wants)}; the caller's
    ${HOLDS[condition.matcher]}: ${listOf(condition.held)}</li>`;
}

/**
 * A grant row's "Pasted claims" cell: whether the checked caller matches the
 * grant's `match`, and if not, each failing condition, by `unmetConditions`,
 * the rule the gateway resolves grants with.
 */
export function claimsMatchCell(check: ClaimsCheck | undefined, match: unknown): MarkupValue {
  const result = check?.result;
  if (result === undefined) return undefined;
  const principal = principalOf(result);
  // An anonymous tenant (loopback development) shows every caller everything: no grant decides.
  if (principal === undefined) return markup`<td><span class="hint">no caller (anonymous tenant)</span></td>`;
  const unmet = unmetConditions((match ?? {}) as GrantMatch, principal);
  if (unmet.length === 0) return markup`<td><span class="ok">matches</span></td>`;
  return markup`<td>
    <span class="bad">does not match</span>
    <ul class="plain">
      ${unmet.map(unmetText)}
    </ul>
  </td>`;
}

function summaryOf(result: PreviewResponse | undefined): MarkupValue {
  if (result === undefined) return undefined;
  const who = result.principal;
  return markup`<div role="status" class="notice ${result.admitted ? 'good' : 'warn'}">
    <p>
      ${
        who === undefined
          ? markup`The tenant is anonymous: every caller sees everything.`
          : markup`Caller <code>${who.subject}</code> of <code>${who.issuer}</code>${
              who.clientId === undefined ? '' : markup`, client <code>${who.clientId}</code>`
            }; scopes ${listOf(who.scopes)}; groups ${listOf(who.groups)}.`
      }
      ${
        result.admitted
          ? ''
          : markup`<strong>An MCP request would be refused (403)</strong>${
              result.missingScopes === undefined || result.missingScopes.length === 0
                ? ''
                : markup`: missing scopes ${listOf(result.missingScopes)}`
            }.`
      }
      Grants it matches:
      ${result.grants.matched.length === 0 ? 'none' : result.grants.matched.map((grant) => grant.name).join(', ')}
      (the "Pasted claims" column below says why for each).
    </p>
  </div>`;
}

/** The "Check claims against these grants" form, posted to the grants page's own `match` route. */
export function claimsCheckSection(tenantId: string, csrfToken: string | undefined, check: ClaimsCheck | undefined) {
  const values = check?.values ?? {};
  const placed = check?.placed;
  return markup`<section aria-labelledby="check-title" id="check">
    <h2 id="check-title">Check claims against these grants</h2>
    ${problemSummary(placed)} ${summaryOf(check?.result)}
    <form method="post" action="${tenantConsolePath(tenantId, 'grants')}/match#check">
      ${writeFields(csrfToken)}
      ${field({ name: CLAIMS_CHECK_FIELDS.claims, label: 'Claims (JSON)', kind: 'textarea', code: true, value: values[CLAIMS_CHECK_FIELDS.claims] ?? '', hint: 'e.g. {"sub": "alice", "groups": ["eng"]}: mapped to a caller as a token from the issuer would be. Leave empty to paste a token instead.', placed })}
      ${field({ name: CLAIMS_CHECK_FIELDS.issuer, label: 'Issuer for the claims (optional)', value: values[CLAIMS_CHECK_FIELDS.issuer] ?? '', hint: 'Required when the tenant trusts several issuers.', placed })}
      ${field({ name: CLAIMS_CHECK_FIELDS.token, label: 'Or an access token', kind: 'textarea', code: true, value: values[CLAIMS_CHECK_FIELDS.token] ?? '', hint: 'Verified exactly as an MCP request would verify it.', placed })}
      <button type="submit">Check</button>
    </form>
  </section>`;
}
