import { errors } from '../oidc-provider-module.js';
import { AssertionRefused } from './assertion-refused.js';

export interface ScopeInputs {
  /** The assertion's `scope`, split; undefined when it has none. */
  readonly asserted: readonly string[] | undefined;
  /** The scopes this tenant's authorization server offers for its resource. */
  readonly offered: readonly string[];
  /** The token request's `scope` parameter, split; undefined when absent. */
  readonly requested: readonly string[] | undefined;
  /** The client's registered `scope`, split; undefined when it registered none. */
  readonly registered: readonly string[] | undefined;
}

/**
 * The scopes of the access token issued for an ID-JAG. The IdP decides
 * (draft-ietf-oauth-identity-assertion-authz-grant section 4: the resource
 * authorization server delegates user authorization to it), so the token
 * never carries more than the assertion grants, and only what this server
 * offers:
 * - an asserted scope this server does not offer is left out; an assertion
 *   whose scopes are all unknown here is refused with `invalid_grant` (MCP
 *   enterprise-managed authorization extension, section 7.6.2);
 * - a `scope` request parameter narrows further: "issue access tokens with
 *   scopes that are the intersection of the requested scopes and the scopes
 *   present in the ID-JAG" (extension section 7.2.1, RFC 6749 section 3.3);
 *   an empty intersection is `invalid_scope`;
 * - so does the client's registered `scope`, as for every other grant.
 * An assertion without `scope` grants no scope.
 */
export function grantedScopes(inputs: ScopeInputs): string[] {
  const offered = new Set(inputs.offered);
  const asserted = [...new Set(inputs.asserted ?? [])];
  let granted = asserted.filter((scope) => offered.has(scope));
  if (asserted.length > 0 && granted.length === 0) {
    throw new AssertionRefused(
      'no_offered_scope',
      `None of the assertion's scopes is offered by this authorization server (offered: ${inputs.offered.join(' ') || 'none'})`,
    );
  }
  if (inputs.registered !== undefined) {
    const registered = new Set(inputs.registered);
    granted = granted.filter((scope) => registered.has(scope));
  }
  if (inputs.requested !== undefined && inputs.requested.length > 0) {
    const requested = new Set(inputs.requested);
    const narrowed = granted.filter((scope) => requested.has(scope));
    if (narrowed.length === 0) {
      throw new errors.InvalidScope(
        'none of the requested scopes is granted by the assertion',
        inputs.requested.join(' '),
      );
    }
    granted = narrowed;
  }
  return granted;
}
