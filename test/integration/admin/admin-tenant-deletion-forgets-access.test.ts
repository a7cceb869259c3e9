import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import { type AdminFixture, startAdminFixture } from './admin-fixture.js';

// A deleted tenant's access activity (who read or listed what) goes with it;
// a suspended tenant keeps it, as it keeps everything else.

describe('access activity of a deleted tenant', () => {
  let f: AdminFixture;
  let operator: string;

  beforeAll(async () => {
    f = await startAdminFixture('pglite');
    operator = await f.operator();
  }, 120_000);
  afterAll(async () => f?.close());

  const recorded = (tenantId: string) => f.gateway.app.accessActivity.list(tenantId);

  it('is kept while the tenant is suspended and forgotten once it is deleted', async () => {
    expect(await f.listNames('alpha')).toEqual(['alpha-a']);
    expect(await f.listNames('beta')).toEqual(['beta-a']);
    await within(5_000, async () => (await recorded('alpha')).length > 0);
    expect((await recorded('beta')).length).toBeGreaterThan(0);

    expect((await f.call('POST', '/tenants/alpha/suspend', { token: operator })).status).toBe(200);
    await f.gateway.app.tenantSync.settled();
    expect((await recorded('alpha')).map((entry) => entry.action)).toEqual(['list']);

    const etag = (await f.call('GET', '/tenants/alpha', { token: operator })).headers.get('etag')!;
    const deleted = await f.call('DELETE', '/tenants/alpha', { token: operator, headers: { 'if-match': etag } });
    expect(deleted.status, deleted.text).toBe(204);
    await within(5_000, async () => (await recorded('alpha')).length === 0);
    // Another tenant's record is untouched.
    expect((await recorded('beta')).map((entry) => entry.grants)).toEqual([['staff']]);
  });
});
