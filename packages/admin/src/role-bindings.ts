import type { Document } from '@mcpgw/control-plane';
import type { Principal } from '@mcpgw/core';

const list = (value: unknown): readonly string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/**
 * Whether a verified caller holds an admin role binding of its tenant (the
 * stored document, `adminRoleBindingSchema`): from the binding's issuer if it
 * names one (`development` names the built-in development issuer), and with
 * any listed scope, group or subject. A binding listing none matches nobody.
 */
export function matchesBinding(
  binding: Document,
  principal: Pick<Principal, 'issuer' | 'subject' | 'scopes' | 'groups'>,
  devIssuer: string | undefined,
): boolean {
  const issuer = binding.issuer;
  if (typeof issuer === 'string') {
    const expected = issuer === 'development' ? devIssuer : issuer;
    if (expected !== principal.issuer) return false;
  }
  return (
    list(binding.scopes).some((scope) => principal.scopes.includes(scope)) ||
    list(binding.groups).some((group) => principal.groups.includes(group)) ||
    list(binding.subjects).includes(principal.subject)
  );
}
