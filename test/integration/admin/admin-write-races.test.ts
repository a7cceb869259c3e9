import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type AdminFixture, type AdminResponse, type Engine, eventually, startAdminFixture } from './admin-fixture.js';

// Two admins changing one tenant at the same moment, each change fine alone
// but not together: removing a source while a grant naming it is added; making
// a tenant anonymous while an issuer is added to it. Exactly one of the two
// commits, the other is refused (422, nothing changed), and the tenant the
// store holds afterwards is one every replica serves: this gateway at the
// stored revision, and one started afresh on the same database.

const ROUNDS = 12;
const WRITE_SETTLED_MS = 10_000;

const isSuccess = (status: number) => status >= 200 && status < 300;

/** One of the two went through, the other was refused as a conflict or as breaking the tenant's rules. */
function expectOneCommitted(responses: readonly AdminResponse[]): void {
  const statuses = responses.map((response) => response.status);
  expect(statuses.filter(isSuccess), JSON.stringify(responses.map((r) => r.text))).toHaveLength(1);
  const refused = responses.find((response) => !isSuccess(response.status))!;
  expect([409, 422], refused.text).toContain(refused.status);
}

describe.each<Engine>(['postgres', 'pglite'])('conflicting admin writes on %s', (engine) => {
  let f: AdminFixture;
  let alphaAdmin: string;
  let operator: string;

  beforeAll(async () => {
    f = await startAdminFixture(engine);
    alphaAdmin = await f.tenantAdmin('alpha');
    operator = await f.operator();
  }, 120_000);
  afterAll(async () => f?.close());

  /** This gateway serves the tenant's stored revision: the stored tenant loaded, validated and started. */
  async function expectServedAsStored(tenantId: string): Promise<void> {
    await eventually(WRITE_SETTLED_MS, async () => {
      const status = await f.call('GET', `/tenants/${tenantId}/status`, { token: operator });
      const runtime = status.json.runtime as { upToDate?: boolean; lastError?: unknown } | undefined;
      return runtime?.upToDate === true && runtime.lastError === undefined;
    });
  }

  it('never keeps both a source removal and a grant naming that source', { timeout: 180_000 }, async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const source = `extra-${round}`;
      const added = await f.call('PUT', `/tenants/alpha/sources/${source}`, {
        token: alphaAdmin,
        body: { type: 'static', resources: [{ uri: `note://alpha/${source}`, name: source, text: 'x' }] },
      });
      expect(added.status, added.text).toBe(201);
      const responses = await Promise.all([
        f.call('DELETE', `/tenants/alpha/sources/${source}`, {
          token: alphaAdmin,
          headers: { 'if-match': added.headers.get('etag')! },
        }),
        f.call('PUT', `/tenants/alpha/grants/reads-${source}`, {
          token: alphaAdmin,
          body: { match: { scopes: ['staff'] }, allow: [{ source }] },
        }),
      ]);
      expectOneCommitted(responses);
      const refused = responses.find((response) => !isSuccess(response.status))!;
      expect(refused.json).toMatchObject({ type: 'urn:mcpgw:admin:problem:validation-failed' });
      await expectServedAsStored('alpha');
    }
  });

  it('never makes a tenant anonymous while an issuer is added to it', { timeout: 180_000 }, async () => {
    const issuer = { issuer: f.idp.beta.issuer, jwksUri: f.idp.beta.jwksUri };
    for (let round = 0; round < ROUNDS; round += 1) {
      const created = await f.call('POST', '/tenants', { token: operator, body: { id: 'gamma' } });
      expect(created.status, created.text).toBe(201);
      const source = await f.call('PUT', '/tenants/gamma/sources/notes', {
        token: operator,
        body: { type: 'static', resources: [{ uri: 'note://gamma/a', name: 'gamma-a', text: 'A' }] },
      });
      expect(source.status, source.text).toBe(201);
      const responses = await Promise.all([
        f.call('PUT', '/tenants/gamma', {
          token: operator,
          body: { anonymous: true },
          headers: { 'if-match': created.headers.get('etag')! },
        }),
        f.call('PUT', `/tenants/gamma/issuers/${encodeURIComponent(issuer.issuer)}`, { token: operator, body: issuer }),
      ]);
      expectOneCommitted(responses);
      await expectServedAsStored('gamma');
      const current = await f.call('GET', '/tenants/gamma', { token: operator });
      const deleted = await f.call('DELETE', '/tenants/gamma', {
        token: operator,
        headers: { 'if-match': current.headers.get('etag')! },
      });
      expect(deleted.status, deleted.text).toBe(204);
    }
  });

  it('pages the audit log newest first, each event once, in numeric id order', async () => {
    for (let i = 0; i < 12; i += 1) {
      const put = await f.call('PUT', `/tenants/alpha/admin-role-bindings/audit-${i}`, {
        token: alphaAdmin,
        body: { subjects: [`auditor-${i}`] },
      });
      expect(put.status, put.text).toBe(201);
    }
    type Event = { id: string; targetId: string };
    const all = (await f.call('GET', '/tenants/alpha/audit?limit=200', { token: alphaAdmin })).json.events as Event[];
    expect(all.length).toBeGreaterThan(20);
    expect(all.length).toBeLessThan(200);
    expect(all[0]?.targetId).toBe('audit-11');
    const ids = all.map((event) => BigInt(event.id));
    expect(ids.every((id, i) => i === 0 || id < ids[i - 1]!)).toBe(true);
    for (const limit of [1, 4]) {
      const paged: Event[] = [];
      let cursor: string | undefined;
      do {
        const page = await f.call(
          'GET',
          `/tenants/alpha/audit?limit=${limit}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
          { token: alphaAdmin },
        );
        expect(page.status, page.text).toBe(200);
        paged.push(...(page.json.events as Event[]));
        cursor = page.json.nextCursor as string | undefined;
      } while (cursor !== undefined);
      expect(paged, `limit ${limit}`).toEqual(all);
    }
  });

  if (engine === 'postgres') {
    it('leaves tenants that a gateway started afresh on the same database serves', async () => {
      const replica = await f.startReplica();
      try {
        await eventually(WRITE_SETTLED_MS, async () => replica.app.tenants.status('alpha') !== undefined);
        expect(replica.app.tenants.status('alpha')?.lastError).toBeUndefined();
        const token = await f.idp.alpha.token({ sub: 'reader', aud: `${replica.baseUrl}/t/alpha/mcp`, scope: 'staff' });
        const listed = await mcpPost<{ result?: { resources: { name: string }[] } }>(
          `${replica.baseUrl}/t/alpha/mcp`,
          'resources/list',
          {},
          { authorization: `Bearer ${token}` },
        );
        expect(listed.status).toBe(200);
        // Every grant that won its round shows its source; every source that lost one is gone.
        const stored = await f.call('GET', '/tenants/alpha/grants', { token: alphaAdmin });
        const granted = (stored.json.items as { name: string }[])
          .map((grant) => grant.name)
          .filter((name) => name.startsWith('reads-'))
          .map((name) => name.slice('reads-'.length));
        expect((listed.body.result?.resources ?? []).map((resource) => resource.name).sort()).toEqual(
          ['alpha-a', ...granted].sort(),
        );
      } finally {
        await replica.close();
      }
    });
  }
});
