import fc from 'fast-check';

// What tenant alpha's admin may try through the admin API, as fast-check
// arbitraries: writes of every entity kind (sources of every type, the
// operator-only `files` included, with credentials and with option keys
// smuggled under `secrets`), tenant settings and lifecycle, previews,
// connection tests, audit and status reads, cache flushes; each addressed to
// alpha or to beta, with beta's entity names, and sometimes with a token that
// alpha's identity provider minted to pass for someone else.

/** What the generators need to know about the running fixture. */
export interface ActionWorld {
  /** Issuer URLs and alpha's public signing key (for issuers that claim another's URL with alpha's keys). */
  readonly issuers: {
    readonly alpha: string;
    readonly alphaJwksUri: string;
    readonly alphaIntrospection: string;
    readonly alphaPublicJwk: Record<string, unknown>;
    readonly beta: string;
    readonly betaJwksUri: string;
    readonly ops: string;
  };
  /** Folders a `files` root might name to reach the sentinel file: absolute, relative, the host's `/`. */
  readonly roots: readonly string[];
  /** The sentinel file's absolute path (never inside any configured folder). */
  readonly sentinelPath: string;
  /** A Postgres database the fixture created for sources. */
  readonly sourceDatabase: string;
  /** A loopback port nothing listens on. */
  readonly closedPort: number;
}

/**
 * Which token carries the request: alpha's admin's own, or one alpha's
 * identity provider signed to pass for someone else (audience of beta's admin
 * resource; `iss` of beta's or the operators' issuer, signed with alpha's key).
 */
export type TokenKind = 'alpha-admin' | 'alpha-for-beta' | 'forged-beta-admin' | 'forged-operator';

/** A token placed in a preview body (minted by the runner). */
export type PreviewToken = 'beta-caller' | 'alpha-caller' | 'forged-beta-caller';

export interface AdminAction {
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** Under `/admin/v1`. */
  readonly path: string;
  readonly target: 'alpha' | 'beta' | 'none';
  readonly body?: unknown;
  /** `current`: the runner reads the entity first and sends its ETag. */
  readonly ifMatch?: 'current' | '"1"' | '*';
  readonly token: TokenKind;
  /** The preview body's token, minted by the runner. */
  readonly previewToken?: PreviewToken;
}

/** Names alpha's own entities use and beta's entities use: writes with beta's names must stay in alpha. */
export const SOURCE_NAMES = ['notes', 'docs', 'vault', 'private', 'extra'] as const;
const GRANT_NAMES = ['staff', 'vault-readers', 'readers', 'all'] as const;
const BINDING_NAMES = ['admins', 'owners', 'break-glass'] as const;
const SCOPES = ['staff', 'vault', 'x', 'gateway:admin'] as const;
const SUBJECTS = ['alice', 'reader', 'dba', 'beta-admin'] as const;
const URIS = ['note://alpha/a', 'note://alpha/b', 'note://beta/a', 'note://beta/private', 'test://x/y'] as const;

const list = <T>(values: readonly T[]) => fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength: 2 });

function sourceBodies(world: ActionWorld): fc.Arbitrary<Record<string, unknown>> {
  const root = fc.constantFrom(...world.roots);
  const staticBody = fc.record({
    type: fc.constant('static'),
    resources: fc.uniqueArray(
      fc.record({
        uri: fc.constantFrom(...URIS),
        name: fc.constantFrom('a', 'b', 'private'),
        text: fc.constantFrom('A', 'B', 'alpha text'),
      }),
      { selector: (resource) => resource.uri, maxLength: 3 },
    ),
  });
  const filesBody = fc.record({ type: fc.constant('files'), root });
  const connection = fc.oneof(
    fc.record({
      host: fc.constantFrom('127.0.0.1', 'localhost'),
      port: fc.constantFrom(5432, world.closedPort),
      database: fc.constant(world.sourceDatabase),
      user: fc.constant('postgres'),
    }),
    fc.record({ url: fc.constant(`postgres://postgres@127.0.0.1:${world.closedPort}/${world.sourceDatabase}`) }),
  );
  const postgresBody = fc.record(
    {
      type: fc.constant('postgres'),
      connection,
      schemas: fc.constant(['shop']),
      pool: fc.constant({ connectionTimeoutMs: 300 }),
      secrets: fc.constant({ 'connection.password': 'alpha-db-password' }),
    },
    { requiredKeys: ['type', 'connection', 'schemas', 'pool'] },
  );
  const s3Body = fc.record({
    type: fc.constant('s3'),
    endpoint: fc.constant(`http://127.0.0.1:${world.closedPort}`),
    bucket: fc.constantFrom('alpha-bucket', 'beta-bucket'),
    forcePathStyle: fc.constant(true),
    requestTimeoutMs: fc.constant(200),
    maxAttempts: fc.constant(1),
    changeDetection: fc.constant({ mode: 'off' }),
    secrets: fc.constant({ 'credentials.accessKeyId': 'AKIAALPHA', 'credentials.secretAccessKey': 'alpha-s3-secret' }),
  });
  const otherType = fc.record({ type: fc.constantFrom('nope', 'Files', 'files ', 'FILES'), root });
  // Option keys under `secrets`, which is for credentials only: the type, a
  // folder on the host, another connection target, the source's id.
  const smuggled = fc.oneof(
    { arbitrary: root.map((where) => ({ type: 'files', root: where })), weight: 4 },
    { arbitrary: root.map((where) => ({ root: where })), weight: 1 },
    {
      arbitrary: fc.constant({ 'connection.host': 'localhost', 'connection.database': world.sourceDatabase }),
      weight: 1,
    },
    {
      arbitrary: fc.constant({ endpoint: `http://127.0.0.1:${world.closedPort + 1}`, bucket: 'beta-bucket' }),
      weight: 1,
    },
    {
      arbitrary: fc.constantFrom({ id: 'notes' }, { id: 'vault' }, { type: 'static' }, { schemas: 'public' }),
      weight: 1,
    },
    {
      arbitrary: fc.dictionary(
        fc.constantFrom('type', 'root', 'connection.host', 'connection.port', 'endpoint', 'region', 'id'),
        fc.constantFrom('files', 'static', '/', ...world.roots, '127.0.0.1'),
        { minKeys: 1, maxKeys: 3 },
      ),
      weight: 2,
    },
  );
  const smuggling = fc
    .tuple(
      fc.oneof(
        // Nothing else in the options, so that options smuggled under `secrets` make a whole entry of another type.
        { arbitrary: fc.constantFrom({ type: 'static' }, { type: 'postgres' }, { type: 's3' }), weight: 4 },
        { arbitrary: fc.oneof(staticBody, postgresBody, s3Body, filesBody), weight: 2 },
      ),
      smuggled,
    )
    .map(([body, secrets]) => ({ ...body, secrets }));
  return fc.oneof(
    { arbitrary: smuggling, weight: 4 },
    { arbitrary: staticBody, weight: 2 },
    { arbitrary: filesBody, weight: 1 },
    { arbitrary: postgresBody, weight: 1 },
    { arbitrary: s3Body, weight: 1 },
    { arbitrary: otherType, weight: 1 },
    { arbitrary: fc.constant({ type: 'static', secrets: null }), weight: 1 },
  );
}

const grantBody = fc.record({
  match: fc.record(
    { scopes: list(SCOPES), subjects: list(SUBJECTS), issuers: list(['https://nobody.invalid']) },
    { requiredKeys: [] },
  ),
  allow: fc.array(
    fc.record(
      {
        source: fc.constantFrom(...SOURCE_NAMES),
        uris: list(['note://alpha/**', 'note://beta/**', 'note://beta/private', 'file:///docs/**', '**', '*']),
      },
      { requiredKeys: ['source'] },
    ),
    { minLength: 1, maxLength: 2 },
  ),
});

function issuerWrites(world: ActionWorld): fc.Arbitrary<{ name: string; body: unknown }> {
  const { issuers } = world;
  const named = (body: Record<string, unknown>) => ({ name: encodeURIComponent(String(body.issuer)), body });
  return fc.oneof(
    fc.constantFrom(
      named({ issuer: issuers.alpha, jwksUri: issuers.alphaJwksUri }),
      // Beta's (or the operators') issuer URL with alpha's keys: tokens alpha
      // signs "as" beta must still never pass at beta.
      named({ issuer: issuers.beta, jwksUri: issuers.alphaJwksUri }),
      named({ issuer: issuers.beta, jwks: { keys: [issuers.alphaPublicJwk] } }),
      named({ issuer: issuers.ops, jwksUri: issuers.alphaJwksUri }),
      named({ issuer: issuers.beta, jwksUri: issuers.betaJwksUri }),
      named({
        issuer: issuers.alpha,
        introspection: { endpoint: issuers.alphaIntrospection, clientId: 'gw', clientSecret: 'alpha-client-secret' },
      }),
      named({ issuer: 'https://idp.alpha.invalid', jwksUri: `file://${world.sentinelPath}` }),
      { name: 'development', body: { development: true } },
      { name: encodeURIComponent(issuers.beta), body: { issuer: issuers.alpha, jwksUri: issuers.alphaJwksUri } },
    ),
  );
}

const bindingBody = fc.record(
  {
    scopes: list(SCOPES),
    subjects: list(SUBJECTS),
    issuer: fc.constantFrom('https://nobody.invalid', 'development'),
  },
  { requiredKeys: [] },
);

// Mostly alpha's admin on alpha's own paths (where writes land), sometimes beta's paths or a borrowed token.
const tenantOf = fc.oneof(
  { arbitrary: fc.constant<'alpha' | 'beta'>('alpha'), weight: 4 },
  { arbitrary: fc.constant<'alpha' | 'beta'>('beta'), weight: 1 },
);
const tokenOf = fc.oneof(
  { arbitrary: fc.constant<TokenKind>('alpha-admin'), weight: 9 },
  { arbitrary: fc.constantFrom<TokenKind>('alpha-for-beta', 'forged-beta-admin', 'forged-operator'), weight: 2 },
);
const ifMatchOf = fc.oneof(
  { arbitrary: fc.constant<AdminAction['ifMatch']>('current'), weight: 6 },
  { arbitrary: fc.constantFrom<AdminAction['ifMatch']>('"1"', '*', undefined), weight: 1 },
);

/** One request alpha's admin (or a token alpha's identity provider minted) sends to the admin API. */
export function adminAction(world: ActionWorld): fc.Arbitrary<AdminAction> {
  const entityWrite = <Body>(collection: string, names: readonly string[], body: fc.Arbitrary<Body>) =>
    fc
      .record({ tenant: tenantOf, name: fc.constantFrom(...names), body, ifMatch: ifMatchOf, token: tokenOf })
      .map(({ tenant, name, body: document, ifMatch, token }): AdminAction => ({
        method: 'PUT',
        path: `/tenants/${tenant}/${collection}/${name}`,
        target: tenant,
        body: document,
        ...(ifMatch === undefined ? {} : { ifMatch }),
        token,
      }));
  const entityDelete = (collection: string, names: readonly string[]) =>
    fc
      .record({ tenant: tenantOf, name: fc.constantFrom(...names), ifMatch: ifMatchOf, token: tokenOf })
      .map(({ tenant, name, ifMatch, token }): AdminAction => ({
        method: 'DELETE',
        path: `/tenants/${tenant}/${collection}/${name}`,
        target: tenant,
        ...(ifMatch === undefined ? {} : { ifMatch }),
        token,
      }));
  const issuerNames = [
    encodeURIComponent(world.issuers.alpha),
    encodeURIComponent(world.issuers.beta),
    encodeURIComponent(world.issuers.ops),
    'development',
  ];
  const issuerWrite = fc
    .record({ tenant: tenantOf, write: issuerWrites(world), ifMatch: ifMatchOf, token: tokenOf })
    .map(({ tenant, write, ifMatch, token }): AdminAction => ({
      method: 'PUT',
      path: `/tenants/${tenant}/issuers/${write.name}`,
      target: tenant,
      body: write.body,
      ...(ifMatch === undefined ? {} : { ifMatch }),
      token,
    }));
  const settings = fc
    .record({
      tenant: tenantOf,
      token: tokenOf,
      kind: fc.constantFrom('put', 'create', 'suspend', 'resume', 'delete'),
      body: fc.record(
        { name: fc.constantFrom('Beta', 'Alpha'), anonymous: fc.boolean(), limits: fc.constant({ maxInFlight: 1 }) },
        { requiredKeys: [] },
      ),
    })
    .map(({ tenant, token, kind, body }): AdminAction => {
      if (kind === 'create') return { method: 'POST', path: '/tenants', target: 'none', body: { id: tenant }, token };
      if (kind === 'put')
        return { method: 'PUT', path: `/tenants/${tenant}`, target: tenant, body, ifMatch: 'current', token };
      if (kind === 'delete')
        return { method: 'DELETE', path: `/tenants/${tenant}`, target: tenant, ifMatch: 'current', token };
      return { method: 'POST', path: `/tenants/${tenant}/${kind}`, target: tenant, token };
    });
  const preview = fc
    .record({
      tenant: tenantOf,
      token: tokenOf,
      as: fc.oneof(
        fc.record({ claims: fc.record({ sub: fc.constantFrom(...SUBJECTS), scope: fc.constantFrom(...SCOPES) }) }),
        fc.constantFrom<PreviewToken>('beta-caller', 'alpha-caller', 'forged-beta-caller'),
      ),
    })
    .map(({ tenant, token, as }): AdminAction => ({
      method: 'POST',
      path: `/tenants/${tenant}/preview`,
      target: tenant,
      token,
      ...(typeof as === 'string' ? { previewToken: as } : { body: as }),
    }));
  const operation = fc
    .record({
      tenant: tenantOf,
      token: tokenOf,
      name: fc.constantFrom(...SOURCE_NAMES),
      kind: fc.constantFrom('test', 'status', 'audit', 'audit-filtered', 'flush', 'list-sources', 'read-source'),
    })
    .map(({ tenant, token, name, kind }): AdminAction => {
      const at = `/tenants/${tenant}`;
      const read = (path: string): AdminAction => ({ method: 'GET', path, target: tenant, token });
      switch (kind) {
        case 'test':
          return { method: 'POST', path: `${at}/sources/${name}/test`, target: tenant, token };
        case 'flush':
          return { method: 'POST', path: `${at}/cache/flush`, target: tenant, token };
        case 'status':
          return read(`${at}/status`);
        case 'audit':
          return read(`${at}/audit?limit=200`);
        case 'audit-filtered':
          return read(`${at}/audit?targetType=source&targetId=${name}&actor=beta-admin`);
        case 'list-sources':
          return read(`${at}/sources`);
        default:
          return read(`${at}/sources/${name}`);
      }
    });
  return fc.oneof(
    { arbitrary: entityWrite('sources', SOURCE_NAMES, sourceBodies(world)), weight: 6 },
    { arbitrary: entityDelete('sources', SOURCE_NAMES), weight: 1 },
    { arbitrary: entityWrite('grants', GRANT_NAMES, grantBody), weight: 2 },
    { arbitrary: entityDelete('grants', GRANT_NAMES), weight: 1 },
    { arbitrary: issuerWrite, weight: 2 },
    { arbitrary: entityDelete('issuers', issuerNames), weight: 1 },
    { arbitrary: entityWrite('admin-role-bindings', BINDING_NAMES, bindingBody), weight: 1 },
    { arbitrary: entityDelete('admin-role-bindings', BINDING_NAMES), weight: 1 },
    { arbitrary: settings, weight: 1 },
    { arbitrary: preview, weight: 1 },
    { arbitrary: operation, weight: 2 },
  );
}
