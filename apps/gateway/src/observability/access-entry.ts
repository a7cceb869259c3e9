import type { FastifyRequest } from 'fastify';
import type { AccessEntry } from '@mcpgw/cache';
import type { Principal } from '@mcpgw/core';
import { InternedValues, internStringList } from '@mcpgw/core';
import type { CompiledGrants } from '@mcpgw/policy';
import { compileGrants, matchingGrants } from '@mcpgw/policy';
import type { TenantRuntime } from '@mcpgw/tenancy';

// Per runtime configuration and per verified principal (the authenticator keeps one object per token), so a
// repeated caller costs a lookup.
const compiled = new WeakMap<TenantRuntime['config'], CompiledGrants>();
const matched = new WeakMap<Principal, readonly string[]>();
/** The principals of one role match the same grants: one frozen list of their names for all of them. */
const grantNames = new InternedValues<readonly string[]>(1_000);

function grantsOf(tenant: TenantRuntime, principal: Principal): readonly string[] {
  let names = matched.get(principal);
  if (names === undefined) {
    let grants = compiled.get(tenant.config);
    if (grants === undefined) {
      grants = compileGrants(tenant.config.grants);
      compiled.set(tenant.config, grants);
    }
    names = internStringList(
      grantNames,
      matchingGrants(grants, principal).map((grant) => grant.name),
    );
    matched.set(principal, names);
  }
  return names;
}

/**
 * What the access activity keeps of a successful `resources/read` or
 * `resources/list`: the tenant fingerprint, the client id, the subject only
 * when a grant of the tenant matches on subjects (docs/security.md, "Access
 * activity"), the URI read and the grants matched. Undefined for anything else.
 */
export function accessEntryOf(request: FastifyRequest, method: string): AccessEntry | undefined {
  if (method !== 'resources/read' && method !== 'resources/list') return undefined;
  const caller = request.mcpCaller;
  const fingerprint = request.mcpLog?.tenantPrincipal;
  if (caller === null || caller.principal === undefined || fingerprint === undefined) return undefined;
  const { tenant, principal } = caller;
  const uri = (request.body as { params?: { uri?: unknown } } | undefined)?.params?.uri;
  const bySubject = tenant.config.grants.some((grant) => (grant.match.subjects?.length ?? 0) > 0);
  return {
    principal: fingerprint,
    clientId: principal.clientId,
    ...(bySubject ? { subject: principal.subject } : {}),
    action: method === 'resources/read' ? 'read' : 'list',
    ...(method === 'resources/read' && typeof uri === 'string' ? { resource: uri } : {}),
    grants: grantsOf(tenant, principal),
  };
}
