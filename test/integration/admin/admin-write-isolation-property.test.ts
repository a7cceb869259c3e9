import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSourceRegistry } from '@mcpgw/gateway/testing';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import { within } from '@mcpgw/test-helpers/within';
import { type AdminFixture, CANARIES, startAdminFixture } from './admin-fixture.js';
import { type AdminAction, type ActionWorld, SOURCE_NAMES, adminAction } from './admin-write-actions.js';

// Property: whatever tenant alpha's admin writes through the admin API (every
// entity kind, sources of every type including operator-only ones, option
// keys smuggled under `secrets`, beta's paths and names, tokens alpha's own
// identity provider minted to pass for beta or for an operator), nothing that
// beta's callers or beta's admins see changes: beta's MCP listings and reads
// for fixed callers with real signed tokens, every admin view of beta
// (settings, entities, status, audit) and the configuration this replica
// serves for beta are byte-identical before and after. Along the way alpha's
// admin never gets a 5xx and never receives beta's data, what the gateway
// serves for alpha is exactly what alpha's admin reads back (credentials
// excepted, under the paths that hold credentials), and no caller of alpha
// ever reads the host's file system (a sentinel file outside every configured
// folder). The tenant boundary is MCP authorization's (2026-07-28,
// "Security Considerations": token audience binding, RFC 8707 section 2) and
// the admin API's own (docs/admin-api.md, "Who may call").

/** Fixed, so that a failure is reproduced by running the file again; fast-check prints it with the counterexample. */
const SEED = 20_260_728;
const RUNS = 40;
const MAX_WRITES = 8;

/** Text only beta holds: alpha may never receive it. */
const BETA_MARK = 'beta-only-4f9c2e71';
const BETA_FORBIDDEN = [BETA_MARK, CANARIES[1]];

/**
 * Option paths that hold credentials, per type, as the served options may
 * carry them from sealed `secrets` while the stored document does not.
 */
const CREDENTIAL_PATHS: Record<string, readonly string[]> = {
  postgres: ['connection.password'],
  s3: ['credentials'],
};

interface Caller {
  readonly name: string;
  readonly claims: Record<string, unknown>;
  /** Signed by alpha's key with beta's `iss`: must never pass at beta. */
  readonly forged?: true;
}

const BETA_CALLERS: readonly Caller[] = [
  { name: 'reader', claims: { sub: 'reader', scope: 'staff' } },
  { name: 'dba', claims: { sub: 'dba', scope: 'staff vault' } },
  { name: 'alice', claims: { sub: 'alice', scope: 'vault x gateway:admin' } },
  { name: 'nobody', claims: { sub: 'nobody', scope: 'other' } },
  { name: 'forged', claims: { sub: 'dba', scope: 'staff vault' }, forged: true },
];
const ALPHA_CALLERS: readonly Caller[] = [
  { name: 'alice', claims: { sub: 'alice', scope: 'staff' } },
  { name: 'reader', claims: { sub: 'reader', scope: 'staff vault x' } },
  { name: 'dba', claims: { sub: 'dba', scope: 'vault x gateway:admin' } },
];
const BETA_URIS = ['note://beta/a', 'note://beta/private', 'note://beta/missing', 'note://alpha/a'];

const pick = (document: Record<string, unknown>, path: string): unknown =>
  path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);

function place(document: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = document;
  for (const key of keys.slice(0, -1)) {
    node[key] = { ...(node[key] as Record<string, unknown> | undefined) };
    node = node[key] as Record<string, unknown>;
  }
  node[keys.at(-1)!] = value;
}

describe('tenant isolation under any admin writes of another tenant (property)', () => {
  let f: AdminFixture;
  let world: ActionWorld;
  let sentinel: { path: string; text: string };
  let alphaDocs: string;
  let betaAdmin: () => Promise<string>;
  const registry = createSourceRegistry();

  const app = () => f.gateway.app;
  const store = () => app().controlPlane!.store;

  /** One MCP request; the status and raw body (never parsed: a snapshot compares bytes). */
  async function mcp(tenant: string, token: string, method: string, params: Record<string, unknown> = {}) {
    const uri = params.uri;
    const response = await fetch(`${f.base}/t/${tenant}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(typeof uri === 'string' ? { 'mcp-name': `=?base64?${Buffer.from(uri).toString('base64')}?=` } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MODERN_META } }),
    });
    // `ttlMs` is how long the answer stays fresh from now (a cached answer's
    // remaining lifetime), the one part of an answer that moves with the clock.
    return { status: response.status, text: (await response.text()).replace(/"ttlMs":\d+/g, '"ttlMs":"(remaining)"') };
  }

  const callerToken = (tenant: 'alpha' | 'beta', caller: Caller) => {
    const aud = `${f.base}/t/${tenant}/mcp`;
    if (caller.forged) return f.idp.alpha.token({ ...caller.claims, iss: f.idp.beta.issuer, aud });
    return f.idp[tenant].token({ ...caller.claims, aud });
  };

  /** Every listing page (at most `pages`), every listed resource read (at most `reads`) and `extra` reads. */
  async function callerView(tenant: 'alpha' | 'beta', caller: Caller, extra: readonly string[], reads = 40) {
    const token = await callerToken(tenant, caller);
    const lines: string[] = [];
    const listed: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 3; page += 1) {
      const answer = await mcp(tenant, token, 'resources/list', cursor === undefined ? {} : { cursor });
      lines.push(`${caller.name} list: ${answer.status} ${answer.text}`);
      const result = (JSON.parse(answer.text) as { result?: { resources?: { uri: string }[]; nextCursor?: string } })
        .result;
      listed.push(...(result?.resources ?? []).map((resource) => resource.uri));
      cursor = result?.nextCursor;
      if (cursor === undefined) break;
    }
    const templates = await mcp(tenant, token, 'resources/templates/list');
    lines.push(`${caller.name} templates: ${templates.status} ${templates.text}`);
    for (const uri of [...listed.slice(0, reads), ...extra]) {
      const answer = await mcp(tenant, token, 'resources/read', { uri });
      lines.push(`${caller.name} read ${uri}: ${answer.status} ${answer.text}`);
    }
    return lines;
  }

  /** Everything beta's callers and beta's admins see, and what this replica serves for beta. */
  async function betaView(): Promise<string[]> {
    const lines: string[] = [];
    for (const caller of BETA_CALLERS) lines.push(...(await callerView('beta', caller, BETA_URIS)));
    const token = await betaAdmin();
    const get = async (path: string) => {
      const answer = await f.call('GET', path, { token });
      lines.push(`GET ${path}: ${answer.status} ${answer.headers.get('etag')} ${answer.text}`);
      return answer;
    };
    await get('/tenants/beta');
    for (const collection of ['issuers', 'sources', 'grants', 'admin-role-bindings']) {
      const listing = await get(`/tenants/beta/${collection}`);
      for (const item of (listing.json.items ?? []) as { name: string }[]) {
        await get(`/tenants/beta/${collection}/${encodeURIComponent(item.name)}`);
      }
    }
    await get('/tenants/beta/status');
    await get('/tenants/beta/audit?limit=200');
    lines.push(`served config: ${JSON.stringify(app().tenants.serving.get('beta')?.config)}`);
    lines.push(`served status: ${JSON.stringify(app().tenants.status('beta'))}`);
    return lines;
  }

  /** What alpha's callers get from alpha: their listings and reads, and reads aimed at the sentinel. */
  async function alphaCallersView(): Promise<string> {
    const file = basename(sentinel.path);
    const suffixes = [sentinel.path.slice(1), file, `${basename(dirname(sentinel.path))}/${file}`, ''];
    const probes = SOURCE_NAMES.flatMap((id) => suffixes.map((suffix) => `file:///${id}/${suffix}`));
    const lines: string[] = [];
    for (const caller of ALPHA_CALLERS) lines.push(...(await callerView('alpha', caller, probes, 20)));
    // A refused read names the URI it was asked for; only what comes back besides that counts.
    return lines.map((line) => probes.reduce((text, uri) => text.replaceAll(uri, '(probe)'), line)).join('\n');
  }

  /** Waits until this replica has applied (or failed to apply) alpha's stored revision. */
  async function alphaSettled(): Promise<void> {
    await within(15_000, async () => {
      const tenant = await store().getTenant('alpha');
      const status = app().tenants.status('alpha');
      if (tenant === undefined || tenant.status !== 'active') return !app().tenants.serving.has('alpha');
      return status?.servingRevision === tenant.revision || status?.lastError?.revision === tenant.revision;
    });
    await app().tenantSync!.settled();
  }

  /**
   * What this replica serves for alpha is what alpha's admin reads back:
   * the same sources, each of its stored type with its stored options, only
   * credentials (at their type's credential paths) added from `secrets`.
   */
  async function expectAlphaServedAsStored(after: string): Promise<void> {
    const tenant = await store().getTenant('alpha');
    const runtime = app().tenants.serving.get('alpha');
    if (tenant === undefined || runtime === undefined) return;
    // A revision that failed to build serves nothing of itself.
    if (app().tenants.status('alpha')?.servingRevision !== tenant.revision) return;
    const stored = await store().listEntities('alpha', 'source');
    const served = runtime.config.sources;
    expect(
      served.map((source) => source.id),
      after,
    ).toEqual(stored.map((entity) => entity.name));
    for (const source of served) {
      const document = stored.find((entity) => entity.name === source.id)!.document;
      expect(source.type, `${after}: type of source "${source.id}"`).toBe(document.type);
      const { type: _type, ttlMs: _ttl, ...options } = document;
      for (const path of CREDENTIAL_PATHS[source.type] ?? []) {
        const value = pick(source.options as Record<string, unknown>, path);
        if (value !== undefined) place(options, path, value);
      }
      const factory = registry.get(String(document.type));
      const parsed = factory === undefined ? undefined : await factory.optionsSchema['~standard'].validate(options);
      const expected = parsed !== undefined && !('issues' in parsed && parsed.issues) ? parsed.value : 'invalid';
      expect(source.options, `${after}: options of source "${source.id}" (stored ${JSON.stringify(document)})`).toEqual(
        expected,
      );
    }
  }

  /** The request alpha's admin (or a token alpha's identity provider minted) sends. */
  async function tokenFor(kind: AdminAction['token']): Promise<string> {
    const { alpha, beta, ops } = f.idp;
    const adminOf = (tenant: string) => `${f.base}/admin/v1/tenants/${tenant}`;
    switch (kind) {
      case 'alpha-admin':
        return f.tenantAdmin('alpha');
      case 'alpha-for-beta':
        return alpha.token({ aud: adminOf('beta'), scope: 'gateway:admin' });
      case 'forged-beta-admin':
        return alpha.token({ iss: beta.issuer, sub: 'beta-admin', aud: adminOf('beta'), scope: 'gateway:admin' });
      default:
        return alpha.token({ iss: ops.issuer, sub: 'olga', aud: `${f.base}/admin/v1`, roles: ['gateway-operator'] });
    }
  }

  async function previewBody(action: AdminAction): Promise<unknown> {
    if (action.previewToken === undefined) return action.body;
    const caller = BETA_CALLERS[1]!;
    if (action.previewToken === 'alpha-caller') return { token: await callerToken('alpha', ALPHA_CALLERS[1]!) };
    if (action.previewToken === 'beta-caller') return { token: await callerToken('beta', caller) };
    return { token: await callerToken('beta', { ...caller, forged: true }) };
  }

  async function send(action: AdminAction): Promise<{ status: number; text: string }> {
    const token = await tokenFor(action.token);
    let ifMatch: string | undefined = action.ifMatch;
    if (ifMatch === 'current') {
      const current = await f.call('GET', action.path, { token });
      ifMatch = current.headers.get('etag') ?? undefined;
    }
    const body = await previewBody(action);
    return f.call(action.method, action.path, {
      token,
      ...(body === undefined ? {} : { body }),
      ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }),
    });
  }

  /** One action, checked: no 5xx, nothing of beta's, and nothing granted outside alpha. */
  async function act(action: AdminAction, index: number): Promise<void> {
    const label = `write ${index}: ${action.method} ${action.path} as ${action.token} ${JSON.stringify(action.body ?? action.previewToken ?? null)}`;
    const answer = await send(action);
    const cause = f.logs.filter((line) => line.includes('admin API request failed')).at(-1) ?? '';
    expect(answer.status, `${label}: ${answer.text} ${cause}`).toBeLessThan(500);
    if (action.target !== 'alpha' || action.token !== 'alpha-admin') {
      expect(answer.status, `${label} must be refused: ${answer.text}`).toBeGreaterThanOrEqual(400);
    }
    for (const forbidden of [...BETA_FORBIDDEN, sentinel.text]) {
      expect(answer.text.includes(forbidden), `${label} answered with "${forbidden}": ${answer.text}`).toBe(false);
    }
    if (answer.status < 300 && action.method !== 'GET') {
      await alphaSettled();
      await expectAlphaServedAsStored(label);
    }
  }

  /** The operator's request, which must succeed. */
  async function asOperator(method: string, path: string, body?: unknown): Promise<void> {
    const token = await f.operator();
    const current = method === 'POST' ? undefined : await f.call('GET', path, { token });
    const etag = current?.status === 200 ? current.headers.get('etag') : null;
    const answer = await f.call(method, path, {
      token,
      ...(body === undefined ? {} : { body }),
      ...(etag === null || etag === undefined ? {} : { headers: { 'if-match': etag } }),
    });
    expect(answer.status, `${method} ${path}: ${answer.text}`).toBeLessThan(300);
  }

  type Entity = { name: string; document: Record<string, unknown>; secretNames?: string[] };
  const COLLECTIONS = ['grants', 'sources', 'issuers', 'admin-role-bindings'] as const;
  let baseline: Record<(typeof COLLECTIONS)[number], Entity[]>;

  async function alphaEntities(collection: string): Promise<Entity[]> {
    const answer = await f.call('GET', `/tenants/alpha/${collection}`, { token: await f.operator() });
    return (answer.json.items ?? []) as Entity[];
  }

  /** Puts alpha back as it was before the first run (as an operator), so every run starts from one state. */
  async function resetAlpha(): Promise<void> {
    const path = (collection: string, name: string) => `/tenants/alpha/${collection}/${encodeURIComponent(name)}`;
    const same = (a: Entity, b: Entity | undefined) =>
      b !== undefined &&
      JSON.stringify([a.document, a.secretNames ?? []]) === JSON.stringify([b.document, b.secretNames ?? []]);
    const restore = async (collection: (typeof COLLECTIONS)[number]) => {
      const current = await alphaEntities(collection);
      for (const entity of baseline[collection]) {
        // Issuers are written again whatever they hold: which principal wrote an
        // issuer decides where the gateway may fetch its keys from.
        const kept = current.find((item) => item.name === entity.name);
        if (collection !== 'issuers' && same(entity, kept)) continue;
        const sealed = (kept?.secretNames ?? []).length > 0;
        const body = sealed ? { ...entity.document, secrets: null } : entity.document;
        await asOperator('PUT', path(collection, entity.name), body);
      }
    };
    const dropExtra = async (collection: (typeof COLLECTIONS)[number]) => {
      for (const entity of await alphaEntities(collection)) {
        if (!baseline[collection].some((item) => item.name === entity.name)) {
          await asOperator('DELETE', path(collection, entity.name));
        }
      }
    };
    // Grants name sources, so: extra grants out, sources back, grants back, extra sources out.
    await dropExtra('grants');
    await restore('sources');
    await restore('grants');
    await dropExtra('sources');
    for (const collection of ['issuers', 'admin-role-bindings'] as const) {
      await restore(collection);
      await dropExtra(collection);
    }
    await alphaSettled();
  }

  beforeAll(async () => {
    f = await startAdminFixture('pglite');
    const host = await mkdtemp(join(tmpdir(), 'gw-host-'));
    sentinel = { path: join(host, `host-sentinel-${Date.now()}.txt`), text: `host file sentinel ${Date.now()} 93ad` };
    await writeFile(sentinel.path, sentinel.text);
    alphaDocs = await mkdtemp(join(tmpdir(), 'gw-alpha-docs-'));
    await writeFile(join(alphaDocs, 'handbook.txt'), 'alpha handbook');
    const configDir = f.gateway.config.configDir;
    world = {
      issuers: {
        alpha: f.idp.alpha.issuer,
        alphaJwksUri: f.idp.alpha.jwksUri,
        alphaIntrospection: f.idp.alpha.introspectionEndpoint,
        alphaPublicJwk: f.idp.alpha.ec.publicJwk as Record<string, unknown>,
        beta: f.idp.beta.issuer,
        betaJwksUri: f.idp.beta.jwksUri,
        ops: f.idp.ops.issuer,
      },
      roots: ['/', host, dirname(host), relative(configDir, host), '..', `${alphaDocs}/../${basename(host)}`],
      sentinelPath: sentinel.path,
      sourceDatabase: f.sourceDb.name,
      closedPort: await freePort(),
    };
    betaAdmin = () => f.tenantAdmin('beta', { sub: 'beta-admin' });

    // Alpha: an operator's folder source beside its static one, both granted to its staff.
    await asOperator('PUT', '/tenants/alpha/sources/docs', { type: 'files', root: alphaDocs });
    await asOperator('PUT', '/tenants/alpha/grants/staff', {
      match: { scopes: ['staff'] },
      allow: [{ source: 'notes' }, { source: 'docs' }],
    });
    // Beta: a Postgres source with a sealed password (an operator's), and its admin's own source and grants.
    await f.seedSecretSource('beta');
    const token = await betaAdmin();
    const betaWrites: [string, unknown][] = [
      [
        '/tenants/beta/sources/private',
        {
          type: 'static',
          resources: [{ uri: 'note://beta/private', name: `private-${BETA_MARK}`, text: `beta's own ${BETA_MARK}` }],
        },
      ],
      [
        '/tenants/beta/grants/vault-readers',
        { match: { scopes: ['vault'] }, allow: [{ source: 'vault' }, { source: 'private' }] },
      ],
      ['/tenants/beta/admin-role-bindings/owners', { subjects: ['beta-admin'] }],
    ];
    for (const [path, body] of betaWrites) {
      const answer = await f.call('PUT', path, { token, body });
      expect(answer.status, answer.text).toBe(201);
    }
    baseline = Object.fromEntries(
      await Promise.all(COLLECTIONS.map(async (collection) => [collection, await alphaEntities(collection)])),
    ) as typeof baseline;
    await alphaSettled();
  }, 120_000);
  afterAll(async () => f?.close());

  it("never changes what beta's callers and admins see, whatever alpha's admin writes", async () => {
    const before = await betaView();
    // The view is stable when nothing happens, or the comparison below would prove nothing.
    expect(await betaView()).toEqual(before);
    expect(before.join('\n')).toContain(BETA_MARK);
    expect(before.join('\n')).toMatch(/dba read note:\/\/beta\/private: 200 .*beta's own/);
    const alphaBefore = await alphaCallersView();
    expect(alphaBefore).toContain('alpha handbook');

    await fc.assert(
      fc.asyncProperty(fc.array(adminAction(world), { minLength: 1, maxLength: MAX_WRITES }), async (actions) => {
        await resetAlpha();
        for (const [index, action] of actions.entries()) await act(action, index);
        await alphaSettled();
        const seen = await alphaCallersView();
        for (const forbidden of [sentinel.text, basename(sentinel.path), ...BETA_FORBIDDEN]) {
          expect(seen.includes(forbidden), `alpha's callers were served "${forbidden}"`).toBe(false);
        }
        expect(await betaView()).toEqual(before);
      }),
      { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: 300_000, markInterruptAsFailure: true },
    );
    await f.expectNoCredentialLeak();
  }, 600_000);
});
