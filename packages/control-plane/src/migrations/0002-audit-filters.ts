/**
 * Indexes behind the audit log's filters. The admin API pages a tenant's
 * events newest first and filters them by action, target (type, or name),
 * actor and time; each index keeps the tenant first and the page order
 * after the filter, so a filtered page reads only the rows it returns
 * instead of walking the tenant's whole trail (which only grows: events are
 * never deleted, not even with their tenant).
 */
export const auditFilters = `
CREATE INDEX audit_events_by_tenant_action ON audit_events (tenant_id, action, id DESC);
CREATE INDEX audit_events_by_tenant_target ON audit_events (tenant_id, target_type, id DESC);
CREATE INDEX audit_events_by_tenant_target_id ON audit_events (tenant_id, target_id, id DESC);
CREATE INDEX audit_events_by_tenant_actor ON audit_events (tenant_id, (actor ->> 'subject'), id DESC);
CREATE INDEX audit_events_by_tenant_time ON audit_events (tenant_id, occurred_at DESC, id DESC);
`;
