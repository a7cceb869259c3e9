import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type S3rverHandle, startS3rver } from '@mcpgw/test-helpers/s3rver';
import { within } from '@mcpgw/test-helpers/within';
import { type AdminFixture, CANARIES, startAdminFixture } from './admin-fixture.js';

// Refusals and failures that point the right way, through the public admin
// API: the path is an entity's name (a body that repeats it may leave it out,
// and must agree when it does not); every 422 names its field by JSON Pointer;
// "test connection" says what to fix as a reason class, never quoting a
// credential; a preview names the revision it was computed at.

type FieldError = { pointer?: string; parameter?: string; detail: string };
const errorsOf = (json: Record<string, unknown>) => (json.errors ?? []) as FieldError[];

describe('admin API errors that point the right way', () => {
  let f: AdminFixture;
  let alphaAdmin: string;
  let operator: string;
  let s3: S3rverHandle;
  const role = `nologin_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    [f, s3] = await Promise.all([startAdminFixture('pglite'), startS3rver({ buckets: ['present'] })]);
    alphaAdmin = await f.tenantAdmin('alpha');
    operator = await f.operator();
    // Postgres on 127.0.0.1 trusts every role: one that may not log in is how authentication fails there.
    await f.sourceDb.sql(`CREATE ROLE ${role} NOLOGIN`);
  }, 120_000);
  afterAll(async () => {
    await f?.sourceDb.sql(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    await Promise.all([f?.close(), s3?.close()]);
  });
  afterEach(async () => f.expectNoCredentialLeak());

  const put = (path: string, body: unknown, token = alphaAdmin) => f.call('PUT', path, { token, body });

  describe('the path names the entity', () => {
    it('takes an issuer URL from the path when the body leaves `issuer` out', async () => {
      const name = encodeURIComponent(f.idp.ops.issuer);
      const created = await put(`/tenants/alpha/issuers/${name}`, { jwksUri: f.idp.ops.jwksUri });
      expect(created.status, created.text).toBe(201);
      expect(created.json).toMatchObject({ name: f.idp.ops.issuer, document: { issuer: f.idp.ops.issuer } });
      const removed = await f.call('DELETE', `/tenants/alpha/issuers/${name}`, {
        token: alphaAdmin,
        headers: { 'if-match': created.headers.get('etag')! },
      });
      expect(removed.status).toBe(204);
    });

    it('refuses an issuer body that names another issuer, pointing at /issuer, and stores nothing', async () => {
      const name = encodeURIComponent(f.idp.ops.issuer);
      const refused = await put(`/tenants/alpha/issuers/${name}`, {
        issuer: f.idp.beta.issuer,
        jwksUri: f.idp.ops.jwksUri,
      });
      expect(refused.status).toBe(422);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(errorsOf(refused.json)).toEqual([
        { pointer: '/issuer', detail: expect.stringContaining('as in the path') },
      ]);
      expect((await f.call('GET', `/tenants/alpha/issuers/${name}`, { token: alphaAdmin })).status).toBe(404);
    });

    it("points at the offending member of an issuer body, not at the union's empty pointer", async () => {
      const name = encodeURIComponent(f.idp.ops.issuer);
      const cases: [Record<string, unknown>, string][] = [
        [{ jwksUri: 'not a url' }, '/jwksUri'],
        [{ issuer: f.idp.ops.issuer, jwksUri: 42 }, '/jwksUri'],
        [{ jwksUri: f.idp.ops.jwksUri, colour: 'blue' }, '/colour'],
        // Where the keys come from: none given points where one belongs, two point at the second.
        [{ issuer: f.idp.ops.issuer }, '/jwksUri'],
        [{ jwksUri: f.idp.ops.jwksUri, discovery: true }, '/discovery'],
      ];
      for (const [body, pointer] of cases) {
        const refused = await put(`/tenants/alpha/issuers/${name}`, body);
        expect(refused.status, JSON.stringify(body)).toBe(422);
        const errors = errorsOf(refused.json);
        expect(errors.map((error) => error.pointer)).toEqual([pointer]);
        expect(errors[0]!.detail).not.toBe('Invalid input');
      }
    });

    it("accepts a source's `id`, a grant's or a role binding's `name` only when it is the path's", async () => {
      const source = { type: 'static', resources: [{ uri: 'note://alpha/named', name: 'named', text: 'N' }] };
      const wrongId = await put('/tenants/alpha/sources/named', { ...source, id: 'other' });
      expect(wrongId.status).toBe(422);
      expect(errorsOf(wrongId.json).map((error) => error.pointer)).toEqual(['/id']);
      const sameId = await put('/tenants/alpha/sources/named', { ...source, id: 'named' });
      expect(sameId.status, sameId.text).toBe(201);
      expect(sameId.json.document).not.toHaveProperty('id');

      const grant = { match: { scopes: ['named'] }, allow: [{ source: 'named' }] };
      const wrongName = await put('/tenants/alpha/grants/readers', { ...grant, name: 'writers' });
      expect(wrongName.status).toBe(422);
      expect(errorsOf(wrongName.json).map((error) => error.pointer)).toEqual(['/name']);
      expect((await f.call('GET', '/tenants/alpha/grants/readers', { token: alphaAdmin })).status).toBe(404);
      const sameName = await put('/tenants/alpha/grants/readers', { ...grant, name: 'readers' });
      expect(sameName.status, sameName.text).toBe(201);
      expect(sameName.json.document).not.toHaveProperty('name');

      const binding = await put('/tenants/alpha/admin-role-bindings/more', { name: 'fewer', subjects: ['zoe'] });
      expect(binding.status).toBe(422);
      expect(errorsOf(binding.json).map((error) => error.pointer)).toEqual(['/name']);
    });
  });

  describe('test connection says what to fix', () => {
    const postgres = (connection: Record<string, unknown>) => ({
      type: 'postgres',
      connection: { host: '127.0.0.1', port: 5432, database: f.sourceDb.name, user: 'postgres', ...connection },
      schemas: ['shop'],
      pool: { connectionTimeoutMs: 3000 },
      secrets: { 'connection.password': CANARIES[0] },
    });

    async function probe(name: string, body: unknown, token = alphaAdmin) {
      const current = await f.call('GET', `/tenants/alpha/sources/${name}`, { token });
      const written = await f.call('PUT', `/tenants/alpha/sources/${name}`, {
        token,
        body,
        headers: current.status === 200 ? { 'if-match': current.headers.get('etag')! } : {},
      });
      expect(written.status, written.text).toBeLessThan(300);
      const tested = await f.call('POST', `/tenants/alpha/sources/${name}/test`, { token });
      expect(tested.status, tested.text).toBe(200);
      return tested.json as { ok: boolean; reason?: string; detail?: string };
    }

    it('answers ok without a reason when the source is reachable', async () => {
      const answer = await probe('pg', postgres({}));
      expect(answer).toMatchObject({ ok: true });
      expect(answer).not.toHaveProperty('reason');
    });

    it('tells a role that may not log in (authentication-failed) from a missing database', async () => {
      expect(await probe('pg', postgres({ user: role }))).toMatchObject({
        ok: false,
        reason: 'authentication-failed',
        detail: expect.stringContaining(role),
      });
      expect(await probe('pg', postgres({ database: 'no_such_database_here' }))).toMatchObject({
        ok: false,
        reason: 'no-such-database',
      });
    });

    it('names a closed port (connection-refused), an unknown host and an address the egress policy refuses', async () => {
      expect(await probe('pg', postgres({ port: 1 }))).toMatchObject({ ok: false, reason: 'connection-refused' });
      // An operator's source is not held to the egress policy, so the resolver itself answers.
      expect(await probe('pg', postgres({ host: 'no-such-host.invalid' }), operator)).toMatchObject({
        ok: false,
        reason: 'host-not-found',
      });
      expect(await probe('pg', postgres({ host: '10.0.0.1' }))).toMatchObject({
        ok: false,
        reason: 'egress-refused',
        detail: expect.stringContaining('EGRESS_ALLOW'),
      });
    });

    it('names a server that does not speak TLS when the source requires it (tls)', async () => {
      // The test cluster runs with ssl off: sslmode=require cannot be met.
      const answer = await probe('pg', {
        type: 'postgres',
        connection: { url: `postgres://postgres@127.0.0.1:5432/${f.sourceDb.name}?sslmode=require` },
        schemas: ['shop'],
        secrets: { 'connection.password': CANARIES[0] },
      });
      expect(answer).toMatchObject({ ok: false, reason: 'tls' });
    });

    it('names a bucket that does not exist (no-such-bucket)', async () => {
      const bucket = (name: string) => ({
        type: 's3',
        endpoint: s3.endpoint,
        forcePathStyle: true,
        bucket: name,
        secrets: {
          'credentials.accessKeyId': s3.credentials.accessKeyId,
          'credentials.secretAccessKey': s3.credentials.secretAccessKey,
        },
      });
      expect(await probe('bucket', bucket('present'))).toMatchObject({ ok: true });
      expect(await probe('bucket', bucket('absent'))).toMatchObject({ ok: false, reason: 'no-such-bucket' });
    });
  });

  describe('preview', () => {
    it('names the revision it was computed at, and whether the stored one is newer', async () => {
      const status = await f.call('GET', '/tenants/alpha/status', { token: alphaAdmin });
      const runtime = status.json.runtime as { revision: number; servingRevision: number };
      const preview = await f.call('POST', '/tenants/alpha/preview', {
        token: alphaAdmin,
        body: { claims: { sub: 'reader', scope: 'staff' } },
      });
      expect(preview.status, preview.text).toBe(200);
      expect(preview.json).toMatchObject({
        revision: runtime.servingRevision,
        storedRevision: runtime.revision,
        upToDate: true,
      });
    });

    it('says when the stored revision is newer than the one it was computed at', async () => {
      const db = f.gateway.app.controlPlane!.db;
      // A revision committed without its change signal: this replica picks it up only at its
      // next reconciliation (every 10 s), so a preview now is computed at the older one.
      // Every preview asked is checked (after the wait, so that no answer is retried away).
      const previews: Awaited<ReturnType<typeof f.call>>[] = [];
      await within(
        5000,
        async () => {
          await db.query("UPDATE tenants SET revision = revision + 1 WHERE id = 'alpha'");
          const preview = await f.call('POST', '/tenants/alpha/preview', {
            token: alphaAdmin,
            body: { claims: { sub: 'reader', scope: 'staff' } },
          });
          previews.push(preview);
          return preview.status !== 200 || (preview.json as { upToDate?: boolean }).upToDate === false;
        },
        'a preview computed at an older revision',
      );
      for (const preview of previews) {
        expect(preview.status, preview.text).toBe(200);
        const { revision, storedRevision, upToDate } = preview.json as Record<string, number | boolean>;
        expect(upToDate).toBe((revision as number) >= (storedRevision as number));
      }
      expect((previews.at(-1)!.json as { upToDate?: boolean }).upToDate).toBe(false);
    });
  });
});
