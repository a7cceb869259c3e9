import { describe, expect, it } from 'vitest';
import type { AccessRecordView } from '../src/console/access-activity-page.js';
import { entityPage } from '../src/console/entity-page.js';
import { callersByGrant } from '../src/console/grant-callers.js';

// The grants page names, per grant, the callers the access activity saw it
// match: each caller once, its latest time, newest first, escaped.

const at = (minute: number) => Date.UTC(2030, 0, 1, 12, minute);
const records: AccessRecordView[] = [
  { principal: 'fp-ann', clientId: 'cli', action: 'read', resource: 'note://a', grants: ['staff', 'all'], at: at(9) },
  { principal: 'fp-bob', action: 'list', grants: ['staff'], at: at(5) },
  { principal: 'fp-ann', clientId: 'cli', action: 'list', grants: ['staff'], at: at(3) },
  { principal: 'fp-eve', subject: '<eve>', action: 'list', grants: [], at: at(1) },
];

const grant = (name: string) => ({
  name,
  version: 1,
  updatedAt: new Date(at(0)).toISOString(),
  tenantManagedBy: 'api' as const,
  document: { match: { scopes: ['staff'] }, allow: [{ source: 'notes' }] },
});

describe('recent callers of grants', () => {
  it('groups the access activity by grant: each caller once, at its latest, newest first', () => {
    const byGrant = callersByGrant(records);
    expect(byGrant.get('staff')).toEqual([
      { principal: 'fp-ann', clientId: 'cli', at: at(9) },
      { principal: 'fp-bob', at: at(5) },
    ]);
    expect(byGrant.get('all')).toEqual([{ principal: 'fp-ann', clientId: 'cli', at: at(9) }]);
    // A caller no grant matched is nobody's recent caller.
    expect([...byGrant.values()].flat().some((caller) => caller.principal === 'fp-eve')).toBe(false);
  });

  it("shows them in each grant's row, linked to the caller's access activity, and none for an unused grant", () => {
    const html = entityPage({
      tenantId: 'acme',
      collection: 'grants',
      viewer: { kind: 'tenant-admin', subject: 'ops', csrfToken: 't' },
      items: [grant('staff'), grant('unused')],
      editing: { values: {} },
      recentCallers: callersByGrant([
        ...records,
        { principal: 'fp-<x>', subject: '<script>', action: 'list', grants: ['staff'], at: at(7) },
      ]),
    });
    expect(html).toContain('<th scope="col">Recent callers</th>');
    const rows = html.split('<tr>').slice(2);
    const staff = rows.find((row) => row.includes('>staff</th>'))!;
    expect(staff).toContain('href="/admin/tenants/acme/access?caller=fp-ann"');
    expect(staff.indexOf('fp-ann')).toBeLessThan(staff.indexOf('fp-bob'));
    expect(staff).toContain('via cli');
    expect(staff).toContain('2030-01-01T12:09:00.000Z');
    expect(staff).toContain('subject &lt;script&gt;');
    expect(staff).not.toContain('<script>');
    expect(rows.find((row) => row.includes('>unused</th>'))).toContain('none lately');
  });

  it('adds no column to the other collections', () => {
    const html = entityPage({
      tenantId: 'acme',
      collection: 'sources',
      viewer: { kind: 'tenant-admin', subject: 'ops', csrfToken: 't' },
      items: [],
      editing: { values: {} },
    });
    expect(html).not.toContain('Recent callers');
  });
});
