import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type AdminFixture, type AdminResponse, CANARIES, eventually, startAdminFixture } from './admin-fixture.js';
import { type RecordingPostgresServer, startRecordingPostgresServer } from './recording-postgres-server.js';

// A source's credentials through the admin API, attacked by a tenant admin
// (alpha's) who holds nothing else: write-only `secrets` may name only the
// credential paths of the source's type (a `type` or `root` there once
// turned a static source into a files source on the host's `/`); stored
// credentials go only where they were written for (a retargeted source
// needs them again); credentials written in the options are refused, from
// operators too. After each test no response, log line, audit row or stored
// document holds a credential.

const HOST_FILE = 'host-secret.txt';
const HOST_FILE_TEXT = 'a file of the gateway host that no tenant may read';

type Body = Record<string, unknown>;

const pointers = (response: AdminResponse): string[] =>
  ((response.json.errors ?? []) as { pointer?: string }[]).map((error) => error.pointer ?? '(none)');

describe('source credentials through the admin API', () => {
  let f: AdminFixture;
  let alphaAdmin: string;
  let operator: string;
  let recorder: RecordingPostgresServer;
  let hostDir: string;

  const put = (name: string, body: unknown, options: { token?: string; etag?: string } = {}) =>
    f.call('PUT', `/tenants/alpha/sources/${name}`, {
      token: options.token ?? alphaAdmin,
      body,
      ...(options.etag === undefined ? {} : { headers: { 'if-match': options.etag } }),
    });
  const postgres = (): Body => ({
    type: 'postgres',
    connection: { host: '127.0.0.1', port: 5432, database: f.sourceDb.name, user: 'postgres' },
    schemas: ['shop'],
  });
  /** Waits until alpha's serving runtime is built from its stored revision. */
  const servedUpToDate = () =>
    eventually(5000, async () => {
      const status = await f.call('GET', '/tenants/alpha/status', { token: alphaAdmin });
      return (status.json.runtime as { upToDate?: boolean }).upToDate === true;
    });
  const readAsStaff = async (uri: string) => {
    const token = await f.idp.alpha.token({ sub: 'reader', aud: `${f.base}/t/alpha/mcp`, scope: 'staff' });
    return mcpPost<{ result?: unknown; error?: { code: number } }>(
      `${f.base}/t/alpha/mcp`,
      'resources/read',
      { uri },
      { authorization: `Bearer ${token}` },
    );
  };

  beforeAll(async () => {
    f = await startAdminFixture('postgres');
    alphaAdmin = await f.tenantAdmin('alpha');
    operator = await f.operator();
    recorder = await startRecordingPostgresServer();
    hostDir = await mkdtemp(join(tmpdir(), 'gw-host-'));
    await writeFile(join(hostDir, HOST_FILE), HOST_FILE_TEXT);
    // The operator's postgres source `vault`, its password CANARIES[1] under secrets.
    await f.seedSecretSource('alpha');
  }, 120_000);
  afterAll(async () => {
    await f?.close();
    await recorder?.close();
  });
  afterEach(async () => f.expectNoCredentialLeak());

  it('refuses secrets that are not credentials of the type with 422 naming each, storing nothing', async () => {
    const before = await f.dump();
    const cases: [Body, string[]][] = [
      // The takeover: a static source served as `files` on a host folder.
      [{ type: 'static', secrets: { type: 'files', root: hostDir } }, ['/secrets/type', '/secrets/root']],
      [{ type: 'static', secrets: { root: '/' } }, ['/secrets/root']],
      [{ type: 'static', secrets: { 'resources.0.text': 'x' } }, ['/secrets/resources.0.text']],
      [{ type: 'static', secrets: { 'a.b.c': 'x' } }, ['/secrets/a.b.c']],
      [
        { type: 'static', secrets: { constructor: 'x', prototype: 'y' } },
        ['/secrets/constructor', '/secrets/prototype'],
      ],
      [{ ...postgres(), secrets: { 'connection.password': 'pw', type: 'files' } }, ['/secrets/type']],
      [
        { ...postgres(), secrets: { 'connection.password': 'pw', 'connection.host': '10.9.8.7' } },
        ['/secrets/connection.host'],
      ],
      [{ ...postgres(), secrets: { connection: 'postgres://x' } }, ['/secrets/connection']],
      [{ ...postgres(), secrets: { 'connection.password.x': 'pw' } }, ['/secrets/connection.password.x']],
      [{ ...postgres(), secrets: { 'connection.password': 'pw', schemas: 'pg_catalog' } }, ['/secrets/schemas']],
      [{ type: 'nope', secrets: { root: '/' } }, ['/type', '/secrets/root']],
    ];
    for (const [body, expected] of cases) {
      for (const token of [alphaAdmin, operator]) {
        const response = await put('x', body, { token });
        expect(response.status, `${JSON.stringify(body)}: ${response.text}`).toBe(422);
        expect(pointers(response), JSON.stringify(body)).toEqual(expected);
        expect(response.json.type).toBe('urn:mcpgw:admin:problem:validation-failed');
      }
    }
    // `__proto__` as a JSON member name, as a string and as an object: refused before any merge.
    for (const raw of [
      '{"type":"static","secrets":{"__proto__":"x"}}',
      '{"type":"static","secrets":{"__proto__":{"type":"files","root":"/"}}}',
      '{"type":"static","__proto__":{"type":"files","root":"/"}}',
    ]) {
      const response = await put('x', JSON.parse(raw));
      expect(response.status, `${raw}: ${response.text}`).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect(await f.dump()).toBe(before);
  });

  it('lets no tenant-admin write make a source serve files of the host', async () => {
    const before = await f.dump();
    const files = { type: 'files', root: hostDir };
    const attempts = [
      put('disk', files),
      put('disk', { ...files, secrets: null }),
      put('disk', { ...files, secrets: {} }),
      // A postgres connection URL naming host files the driver reads (libpq's sslrootcert).
      put('disk', {
        ...postgres(),
        connection: { url: `postgres://postgres@127.0.0.1:5432/db?sslrootcert=${join(hostDir, HOST_FILE)}` },
        secrets: { 'connection.password': 'pw' },
      }),
    ];
    // A Unix socket folder of the gateway's host as the host (libpq's rule), in either form.
    const password = { 'connection.password': 'pw' };
    for (const connection of [
      { host: '/var/run/postgresql', database: 'db', user: 'postgres' },
      { url: 'postgres://postgres@%2Fvar%2Frun%2Fpostgresql/db' },
      { url: 'postgres://postgres@localhost/db?host=/var/run/postgresql' },
    ]) {
      attempts.push(put('disk', { ...postgres(), connection, secrets: password }));
    }
    const results = await Promise.all(attempts);
    expect(
      results.map((r) => r.status),
      results.map((r) => r.text).join('\n'),
    ).toEqual([403, 403, 403, 403, 403, 403, 403]);
    expect(results.slice(3).map(pointers)).toEqual([
      ['/connection/url'],
      ['/connection/host'],
      ['/connection/url'],
      ['/connection/url'],
    ]);
    expect(await f.dump()).toBe(before);

    // Credentials sealed before the type's model bound them (as the takeover stored them) are
    // never merged into what is served, are not listed, and do not survive the next write.
    const store = f.gateway.app.controlPlane!.store;
    await store.putEntity(
      { actor: { kind: 'operator', subject: 'an older gateway' } },
      'alpha',
      'source',
      'legacy',
      { type: 'static' },
      { secrets: { type: 'files', root: hostDir } },
    );
    const grant = await f.call('PUT', '/tenants/alpha/grants/legacy-readers', {
      token: alphaAdmin,
      body: { match: { scopes: ['staff'] }, allow: [{ source: 'legacy' }] },
    });
    expect(grant.status, grant.text).toBe(201);
    await servedUpToDate();
    expect(await f.listNames('alpha')).not.toContain(HOST_FILE);
    const read = await readAsStaff(`file:///legacy/${HOST_FILE}`);
    expect(read.text).not.toContain(HOST_FILE_TEXT);
    expect(read.body.error).toMatchObject({ code: -32602 });
    const legacy = await f.call('GET', '/tenants/alpha/sources/legacy', { token: alphaAdmin });
    expect(legacy.json).toMatchObject({ document: { type: 'static' }, secretNames: [] });
    const rewritten = await put('legacy', { type: 'static' }, { etag: legacy.headers.get('etag')! });
    expect(rewritten.status, rewritten.text).toBe(200);
    expect(await store.openSourceSecrets('alpha', 'legacy')).toEqual({});
    const audit = await f.call('GET', '/tenants/alpha/audit?targetId=legacy&limit=1', { token: alphaAdmin });
    expect((audit.json.events as Body[])[0]).toMatchObject({
      action: 'update',
      before: { secretNames: ['type', 'root'] },
      after: { document: { type: 'static' }, secretNames: [] },
    });
    // Across a change of type nothing stored survives that was not bound to the old type.
    await store.putEntity(
      { actor: { kind: 'operator', subject: 'an older gateway' } },
      'alpha',
      'source',
      'legacy-typed',
      { type: 'static' },
      { secrets: { 'connection.password': CANARIES[0] } },
    );
    const retyped = await put('legacy-typed', postgres(), { token: operator, etag: '"1"' });
    expect(retyped.status, retyped.text).toBe(200);
    expect(retyped.json).toMatchObject({ secretNames: [] });
    expect(await store.openSourceSecrets('alpha', 'legacy-typed')).toEqual({});
    for (const [path, etag] of [
      ['/tenants/alpha/grants/legacy-readers', grant.headers.get('etag')!],
      ['/tenants/alpha/sources/legacy', rewritten.headers.get('etag')!],
      ['/tenants/alpha/sources/legacy-typed', retyped.headers.get('etag')!],
    ] as const) {
      expect((await f.call('DELETE', path, { token: alphaAdmin, headers: { 'if-match': etag } })).status).toBe(204);
    }
  });

  it('refuses credentials written in the options or a URL (postgres, s3), from operators too, never echoing them', async () => {
    const before = await f.dump();
    const db = f.sourceDb.name;
    const s3 = { type: 's3', endpoint: 'http://127.0.0.1:9', bucket: 'reports', forcePathStyle: true };
    const cases: [Body, string[]][] = [
      [
        { ...postgres(), connection: { ...(postgres().connection as Body), password: CANARIES[0] } },
        ['/connection/password'],
      ],
      [
        { ...postgres(), connection: { url: `postgres://postgres:${CANARIES[0]}@127.0.0.1:5432/${db}` } },
        ['/connection/url'],
      ],
      [
        { ...postgres(), connection: { url: `postgres://postgres@127.0.0.1:5432/${db}?password=${CANARIES[0]}` } },
        ['/connection/url'],
      ],
      [
        { ...s3, credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: CANARIES[0] } },
        ['/credentials/accessKeyId', '/credentials/secretAccessKey'],
      ],
      [
        { ...s3, credentials: { secretAccessKey: CANARIES[0] }, secrets: { 'credentials.accessKeyId': 'AKIAEXAMPLE' } },
        ['/credentials/secretAccessKey'],
      ],
    ];
    for (const [body, expected] of cases) {
      for (const token of [alphaAdmin, operator]) {
        const response = await put('ledger', body, { token });
        expect(response.status, response.text).toBe(422);
        expect(pointers(response)).toEqual(expected);
        expect(response.text).toContain('under \\"secrets\\"');
        expect(response.text).not.toContain(CANARIES[0]);
      }
    }
    // Without any credential a tenant admin's source would connect with the gateway's own
    // (PGPASSWORD or ~/.pgpass; the AWS SDK's default chain): only operators may lend them.
    for (const body of [postgres(), s3]) {
      const response = await put('ledger', body);
      expect(response.status, response.text).toBe(403);
      expect(pointers(response)).toEqual(['/secrets']);
    }
    expect(await f.dump()).toBe(before);

    // Under `secrets` the same credentials are accepted, for a connection URL too; responses
    // and the audit log show what is served, naming the credentials, never holding them.
    const url = `postgres://postgres@127.0.0.1:5432/${db}`;
    const created = await put('ledger', {
      ...postgres(),
      connection: { url },
      secrets: { 'connection.password': CANARIES[0] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({
      document: { type: 'postgres', connection: { url } },
      secretNames: ['connection.password'],
    });
    expect((await f.call('POST', '/tenants/alpha/sources/ledger/test', { token: alphaAdmin })).json).toMatchObject({
      ok: true,
    });
    const audit = await f.call('GET', '/tenants/alpha/audit?targetId=ledger&limit=1', { token: alphaAdmin });
    expect((audit.json.events as Body[])[0]).toMatchObject({
      action: 'create',
      after: { document: { type: 'postgres', connection: { url } }, secretNames: ['connection.password'] },
    });
    // The URL form's password goes to the server the URL names, as the host form's does.
    const moved = await put(
      'ledger',
      {
        ...postgres(),
        connection: { url: `postgres://postgres@127.0.0.1:${recorder.port}/${db}` },
        secrets: { 'connection.password': 'the url form password' },
      },
      { etag: created.headers.get('etag')! },
    );
    expect(moved.status, moved.text).toBe(200);
    const probe = await f.call('POST', '/tenants/alpha/sources/ledger/test', { token: alphaAdmin });
    expect(probe.json).toMatchObject({ ok: false });
    expect(recorder.received()).toContain('the url form password');
    expect(recorder.received()).not.toContain(CANARIES[0]);
    const removed = await f.call('DELETE', '/tenants/alpha/sources/ledger', {
      token: alphaAdmin,
      headers: { 'if-match': moved.headers.get('etag')! },
    });
    expect(removed.status).toBe(204);

    // The bootstrap file may write a credential in clear among the options (operators write what
    // they like there); responses show it redacted, a `{ $env }` reference as written.
    const written = 'a password the bootstrap file wrote in clear';
    await f.gateway.app.controlPlane!.store.putEntity(
      { actor: { kind: 'bootstrap', subject: 'gateway.json' } },
      'alpha',
      'source',
      'declared',
      { ...postgres(), connection: { ...(postgres().connection as Body), password: written } },
    );
    const declared = await f.call('GET', '/tenants/alpha/sources/declared', { token: alphaAdmin });
    expect(declared.json).toMatchObject({ document: { connection: { password: '[redacted]' } }, secretNames: [] });
    const listed = await f.call('GET', '/tenants/alpha/sources', { token: alphaAdmin });
    expect(`${declared.text}${listed.text}`).not.toContain(written);
    const declaredRemoved = await f.call('DELETE', '/tenants/alpha/sources/declared', {
      token: operator,
      headers: { 'if-match': declared.headers.get('etag')! },
    });
    expect(declaredRemoved.status).toBe(204);
  });

  it("binds the operator's stored password to its server: retargeting needs secrets again, and it never reaches the admin's", async () => {
    const vault = await f.call('GET', '/tenants/alpha/sources/vault', { token: alphaAdmin });
    expect(vault.json).toMatchObject({ secretNames: ['connection.password'] });
    const etag = vault.headers.get('etag')!;
    const document = vault.json.document as Body & { connection: Body };
    const before = await f.dump();
    const receivedBefore = recorder.received();
    const attempts: [Body, string[]][] = [
      [{ ...document, connection: { ...document.connection, port: recorder.port } }, ['/connection/port']],
      [{ ...document, connection: { ...document.connection, host: 'localhost' } }, ['/connection/host']],
      [{ ...document, connection: { ...document.connection, database: 'postgres' } }, ['/connection/database']],
      [
        { ...document, connection: { url: `postgres://postgres@127.0.0.1:${recorder.port}/x` } },
        ['/connection/url', '/connection/host', '/connection/port', '/connection/database'],
      ],
      [{ type: 's3', endpoint: `http://127.0.0.1:${recorder.port}`, bucket: 'reports' }, ['/type']],
    ];
    for (const [body, expected] of attempts) {
      const response = await put('vault', body, { etag });
      expect(response.status, response.text).toBe(422);
      expect(pointers(response)).toEqual(expected);
      expect(response.json.detail).toContain('send "secrets" again');
    }
    expect(await f.dump()).toBe(before);
    // The connection test opens what is stored, which is what is served: the operator's server.
    const tested = await f.call('POST', '/tenants/alpha/sources/vault/test', { token: alphaAdmin });
    expect(tested.json).toMatchObject({ ok: true });
    expect(recorder.received()).toBe(receivedBefore);

    // A change that is not a target keeps the stored password.
    const tuned = await put('vault', { ...document, statementTimeoutMs: 4000 }, { etag });
    expect(tuned.status, tuned.text).toBe(200);
    expect(tuned.json).toMatchObject({ secretNames: ['connection.password'] });
    // Resending credentials makes the retarget fine: the admin's own password goes there.
    const retargeted = await put(
      'vault',
      {
        ...document,
        connection: { ...document.connection, port: recorder.port },
        secrets: { 'connection.password': 'the admins own password' },
      },
      { etag: tuned.headers.get('etag')! },
    );
    expect(retargeted.status, retargeted.text).toBe(200);
    const probe = await f.call('POST', '/tenants/alpha/sources/vault/test', { token: alphaAdmin });
    expect(probe.json).toMatchObject({ ok: false });
    expect(recorder.received()).toContain('the admins own password');
    expect(recorder.received()).not.toContain(CANARIES[1]);
    // Dropping them (null) leaves a tenant admin's postgres source without credentials: operators only.
    const dropped = await put('vault', { ...document, secrets: null }, { etag: retargeted.headers.get('etag')! });
    expect(dropped.status, dropped.text).toBe(403);
    const byOperator = await put(
      'vault',
      { ...document, secrets: null },
      { token: operator, etag: retargeted.headers.get('etag')! },
    );
    expect(byOperator.status, byOperator.text).toBe(200);
    expect(byOperator.json).toMatchObject({ secretNames: [] });
    const removed = await f.call('DELETE', '/tenants/alpha/sources/vault', {
      token: alphaAdmin,
      headers: { 'if-match': byOperator.headers.get('etag')! },
    });
    expect(removed.status).toBe(204);
    expect(recorder.received()).not.toContain(CANARIES[1]);
  });

  it("binds an s3 source's stored keys to its endpoint, region, bucket and addressing", async () => {
    const body = { type: 's3', endpoint: 'http://127.0.0.1:9', bucket: 'reports', forcePathStyle: true };
    const created = await put('objects', {
      ...body,
      secrets: { 'credentials.accessKeyId': 'AKIAEXAMPLE', 'credentials.secretAccessKey': CANARIES[0] },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject({
      secretNames: ['credentials.accessKeyId', 'credentials.secretAccessKey'],
    });
    const etag = created.headers.get('etag')!;
    const before = await f.dump();
    const attempts: [Body, string[]][] = [
      [{ ...body, endpoint: `http://127.0.0.1:${recorder.port}` }, ['/endpoint']],
      [{ ...body, region: 'eu-west-3' }, ['/region']],
      [{ ...body, bucket: 'other' }, ['/bucket']],
      [{ ...body, forcePathStyle: false }, ['/forcePathStyle']],
    ];
    for (const [attempt, expected] of attempts) {
      const response = await put('objects', attempt, { etag });
      expect(response.status, response.text).toBe(422);
      expect(pointers(response)).toEqual(expected);
    }
    expect(await f.dump()).toBe(before);
    const narrowed = await put('objects', { ...body, prefix: 'public/' }, { etag });
    expect(narrowed.status, narrowed.text).toBe(200);
    expect(narrowed.json).toMatchObject({ secretNames: ['credentials.accessKeyId', 'credentials.secretAccessKey'] });
    const removed = await f.call('DELETE', '/tenants/alpha/sources/objects', {
      token: alphaAdmin,
      headers: { 'if-match': narrowed.headers.get('etag')! },
    });
    expect(removed.status).toBe(204);
  });
});
