import type { LocalIssuer } from './local-issuer.js';

/** One event of a tenant's audit log as the admin API returns it (docs/admin-api.md, "Audit log"). */
export interface AuditEvent {
  actor: { kind: string; subject: string; issuer?: string; clientId?: string };
  action: string;
  targetType: string;
  targetId: string;
  after: Record<string, unknown> | null;
}

/**
 * A tenant's audit log read as an operator would: `GET /admin/v1/tenants/{id}/audit` with a token of
 * the operators' issuer (`roles: ['gateway-operator']`), `query` its filters (e.g. `{ action: 'refuse' }`).
 * Throws unless the admin API answers 200.
 */
export async function readAuditLog(
  baseUrl: string,
  operators: LocalIssuer,
  tenantId: string,
  query: Record<string, string> = {},
): Promise<AuditEvent[]> {
  const token = await operators.token({ sub: 'olga', aud: `${baseUrl}/admin/v1`, roles: ['gateway-operator'] });
  const url = new URL(`${baseUrl}/admin/v1/tenants/${tenantId}/audit`);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`the audit log of ${tenantId} answered ${response.status}`);
  return ((await response.json()) as { events: AuditEvent[] }).events;
}
