import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import type { BuildAppOptions } from '@mcpgw/gateway/testing';
import type { StartedGateway } from '@mcpgw/test-helpers/gateway';
import { startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';
import { expectRegisteredProblem } from './registered-problem.js';

// One gateway with the admin API over a control plane (real Postgres or
// PGlite), three real issuers (tenant alpha's, tenant beta's, the
// operators'), and a recording of every response and log line so that a
// test can prove no credential ever left the store.

/** Recognisable credential values: no response, log line or audit row may ever contain one. */
export const CANARIES = ['canary-pw-7f3a9e1b2c', 'canary-pw-second-55d1'] as const;

export type Engine = 'postgres' | 'pglite';

export interface AdminResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: Record<string, unknown> & { [key: string]: unknown };
}

export interface AdminFixture {
  readonly gateway: StartedGateway;
  readonly base: string;
  readonly idp: { readonly alpha: LocalIssuer; readonly beta: LocalIssuer; readonly ops: LocalIssuer };
  /** A database for postgres sources (schema `shop`), separate from the control plane. */
  readonly sourceDb: TestDatabase;
  /** Every response text and header seen, and every log line. */
  readonly transcript: string[];
  readonly logs: string[];
  call(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<AdminResponse>;
  /** An admin token of `tenant` from its own issuer (scope `gateway:admin`). */
  tenantAdmin(tenant: 'alpha' | 'beta', claims?: Record<string, unknown>): Promise<string>;
  operator(claims?: Record<string, unknown>): Promise<string>;
  /** The resource names an MCP caller with scope `staff` lists in `tenant`. */
  listNames(tenant: 'alpha' | 'beta'): Promise<string[]>;
  /** Adds a postgres source `vault` to `tenant` whose password is a canary (through the API, as an operator). */
  seedSecretSource(tenant: 'alpha' | 'beta'): Promise<void>;
  /** Every control-plane table as text (sealed columns as is): equal dumps mean nothing changed. */
  dump(): Promise<string>;
  /** Fails when any response, log line or audit row holds a credential. */
  expectNoCredentialLeak(): Promise<void>;
  /**
   * Another gateway on the same control plane (Postgres only), as a replica
   * restarted now would come up: same bootstrap file, same keys. The caller closes it.
   */
  startReplica(): Promise<StartedGateway>;
  close(): Promise<void>;
}

const tenantEntry = (id: string, issuer: LocalIssuer) => ({
  id,
  auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
  grants: [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'notes' }] }],
  sources: [{ id: 'notes', type: 'static', resources: [{ uri: `note://${id}/a`, name: `${id}-a`, text: 'A' }] }],
  adminRoleBindings: [{ name: 'admins', scopes: ['gateway:admin'] }],
});

/** `admin`: the admin API options given to buildApp (extra routes and authenticators). */
export async function startAdminFixture(engine: Engine, admin: BuildAppOptions['admin'] = {}): Promise<AdminFixture> {
  const [alpha, beta, ops] = await Promise.all([
    startLocalIssuer({ path: '/alpha' }),
    startLocalIssuer({ path: '/beta' }),
    startLocalIssuer({ path: '/ops' }),
  ]);
  const sourceDb = await createTestDatabase('admin_source');
  await sourceDb.sql('CREATE SCHEMA shop; CREATE TABLE shop.items (id int PRIMARY KEY, name text)');
  const controlDb = engine === 'postgres' ? await createTestDatabase('admin_control') : undefined;
  const configPath = join(await mkdtemp(join(tmpdir(), 'gw-admin-')), 'gateway.json');
  await writeFile(configPath, JSON.stringify({ tenants: [tenantEntry('alpha', alpha), tenantEntry('beta', beta)] }));
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const env = {
    SECRETS_KEY: 'an admin test server secret of at least thirty-two characters',
    OPERATOR_ISSUER: ops.issuer,
    OPERATOR_JWKS_URI: ops.jwksUri,
    // Tenant admins here point sources and issuers at loopback test servers (docs/configuration.md, "Egress policy").
    EGRESS_ALLOW: '127.0.0.1',
    ...(controlDb === undefined ? {} : { DATABASE_URL: controlDb.url }),
  };
  const gateway = await startGateway({ configPath, admin, logStream, env });
  const base = gateway.baseUrl;
  const transcript: string[] = [];
  const db = () => gateway.app.controlPlane!.db;

  const fixture: AdminFixture = {
    gateway,
    base,
    idp: { alpha, beta, ops },
    sourceDb,
    transcript,
    logs,
    async call(method, path, options = {}) {
      const response = await fetch(`${base}/admin/v1${path}`, {
        method,
        headers: {
          ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
      const text = await response.text();
      transcript.push(JSON.stringify([...response.headers]), text);
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        json = {};
      }
      // Every refusal any admin test provokes is one of the registry's problem types.
      if (response.status >= 400) expectRegisteredProblem(json, response.status, `${method} ${path}`);
      return { status: response.status, headers: response.headers, text, json };
    },
    tenantAdmin(tenant, claims = {}) {
      const issuer = tenant === 'alpha' ? alpha : beta;
      return issuer.token({ aud: `${base}/admin/v1/tenants/${tenant}`, scope: 'gateway:admin', ...claims });
    },
    operator(claims = {}) {
      return ops.token({ sub: 'olga', aud: `${base}/admin/v1`, roles: ['gateway-operator'], ...claims });
    },
    async listNames(tenant) {
      const issuer = tenant === 'alpha' ? alpha : beta;
      const token = await issuer.token({ sub: 'reader', aud: `${base}/t/${tenant}/mcp`, scope: 'staff' });
      const result = await mcpPost<{ result?: { resources: { name: string }[] } }>(
        `${base}/t/${tenant}/mcp`,
        'resources/list',
        {},
        { authorization: `Bearer ${token}` },
      );
      return (result.body.result?.resources ?? []).map((resource) => resource.name);
    },
    async seedSecretSource(tenant) {
      const response = await fixture.call('PUT', `/tenants/${tenant}/sources/vault`, {
        token: await fixture.operator(),
        body: {
          type: 'postgres',
          connection: { host: '127.0.0.1', port: 5432, database: sourceDb.name, user: 'postgres' },
          schemas: ['shop'],
          secrets: { 'connection.password': CANARIES[1] },
        },
      });
      expect(response.status, response.text).toBe(201);
    },
    async dump() {
      const tables = [
        'tenants',
        'issuers',
        'sources',
        'grants',
        'admin_role_bindings',
        'authorization_servers',
        'audit_events',
      ];
      const parts: string[] = [];
      for (const table of tables) {
        const { rows } = await db().query(`SELECT * FROM ${table} ORDER BY 1, 2`);
        parts.push(`${table}: ${JSON.stringify(rows)}`);
      }
      return parts.join('\n');
    },
    async expectNoCredentialLeak() {
      const { rows } = await db().query<{ row: unknown }>('SELECT row_to_json(a) AS row FROM audit_events a');
      const { rows: documents } = await db().query<{ document: unknown }>(
        'SELECT document FROM sources UNION ALL SELECT document FROM authorization_servers',
      );
      const haystacks = {
        responses: transcript.join('\n'),
        logs: logs.join(''),
        audit: JSON.stringify(rows),
        storedDocuments: JSON.stringify(documents),
      };
      for (const [where, text] of Object.entries(haystacks)) {
        for (const canary of CANARIES) expect(text.includes(canary), `${canary} found in ${where}`).toBe(false);
      }
    },
    startReplica() {
      if (controlDb === undefined) throw new Error('an embedded control plane has one gateway');
      return startGateway({ configPath, admin, env });
    },
    async close() {
      await gateway.close();
      await Promise.all([alpha.close(), beta.close(), ops.close()]);
      await sourceDb.drop();
      await controlDb?.drop();
    },
  };
  return fixture;
}

/** Polls until `check` holds, or fails after `limitMs` (cross-replica observation). */
export async function eventually(limitMs: number, check: () => Promise<boolean>): Promise<void> {
  await within(limitMs, check);
}
