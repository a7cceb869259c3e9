/** One example request of a write: its body, and the path name it is sent to (entity writes). */
export interface AdminExample {
  readonly summary: string;
  /** The `{name}` of the path the body goes to, when the operation has one. */
  readonly name?: string;
  readonly value: Record<string, unknown>;
}

// Example request bodies of every write, for the OpenAPI document and its
// reference page (docs/admin-api.md). A test sends each of them through the
// API, so none can drift from what the routes accept.

export const issuerExamples: Readonly<Record<string, AdminExample>> = {
  jwks: {
    summary: 'Trust an issuer by its JWKS (the path names it: `issuer` may be left out)',
    name: 'https://idp.example.com/realms/acme',
    value: { jwksUri: 'https://idp.example.com/realms/acme/protocol/openid-connect/certs', groupsClaim: 'groups' },
  },
  discovery: {
    summary: 'Trust an issuer found by OpenID Connect discovery; `issuer` repeated, as it must then agree',
    name: 'https://login.example.org',
    value: { issuer: 'https://login.example.org', discovery: true },
  },
};

export const sourceExamples: Readonly<Record<string, AdminExample>> = {
  postgres: {
    summary: 'A Postgres database; the password under `secrets` (write-only)',
    name: 'warehouse',
    value: {
      type: 'postgres',
      connection: { host: 'db.example.com', port: 5432, database: 'warehouse', user: 'gateway_reader' },
      schemas: ['public'],
      secrets: { 'connection.password': 'the-database-password' },
    },
  },
  s3: {
    summary: 'An S3 bucket; the access key under `secrets` (write-only)',
    name: 'reports',
    value: {
      type: 's3',
      region: 'eu-west-1',
      bucket: 'acme-reports',
      prefix: 'published/',
      secrets: {
        'credentials.accessKeyId': 'AKIAEXAMPLEEXAMPLE',
        'credentials.secretAccessKey': 'the-secret-access-key',
      },
    },
  },
  static: {
    summary: 'Fixed resources written inline (no credentials)',
    name: 'handbook',
    value: {
      type: 'static',
      resources: [{ uri: 'note://handbook/welcome', name: 'welcome', mimeType: 'text/plain', text: 'Hello' }],
    },
  },
};

export const grantExamples: Readonly<Record<string, AdminExample>> = {
  byScope: {
    summary: 'Callers with scope `reports:read` see the published reports',
    name: 'report-readers',
    value: { match: { scopes: ['reports:read'] }, allow: [{ source: 'reports', uris: ['s3:///reports/**'] }] },
  },
};

export const adminRoleBindingExamples: Readonly<Record<string, AdminExample>> = {
  byGroup: {
    summary: "Members of the issuer's `gateway-admins` group administer the tenant",
    name: 'admins',
    value: { groups: ['gateway-admins'] },
  },
};

export const createTenantExamples: Readonly<Record<string, AdminExample>> = {
  minimal: {
    summary: 'A tenant with a display name and its own rate limit',
    value: { id: 'acme', name: 'Acme Corp', limits: { requestsPerMinute: 600 } },
  },
};

export const tenantSettingsExamples: Readonly<Record<string, AdminExample>> = {
  scopes: {
    summary: 'Require a scope of every MCP caller',
    value: { name: 'Acme Corp', auth: { requiredScopes: ['mcp:access'] }, limits: { maxInFlight: 50 } },
  },
};

export const previewExamples: Readonly<Record<string, AdminExample>> = {
  claims: {
    summary: "A caller's claims, mapped by that issuer's claim settings as a verified token's would be",
    value: {
      claims: { sub: 'alice', scope: 'reports:read', groups: ['finance'] },
      issuer: 'https://idp.example.com/realms/acme',
    },
  },
  token: {
    summary: 'A real access token, verified as the MCP endpoint would',
    value: { token: 'eyJhbGciOiJSUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJhbGljZSJ9.signature' },
  },
};

/** An answer of `POST .../sources/{name}/test`, for the reference page. */
export const connectionTestExamples: Readonly<Record<string, AdminExample>> = {
  ok: { summary: 'The source answered', value: { ok: true, elapsedMs: 42 } },
  refused: {
    summary: 'Wrong credentials: what to fix, with the credential redacted',
    value: {
      ok: false,
      reason: 'authentication-failed',
      detail: 'password authentication failed for user "gateway_reader"',
      elapsedMs: 87,
    },
  },
};

export const authorizationServerExamples: Readonly<Record<string, AdminExample>> = {
  entra: {
    summary:
      'Sign users in at Entra ID (no dynamic registration there: the gateway is its one client); the secret is write-only',
    value: {
      upstream: {
        issuer: 'https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0',
        clientId: '11111111-2222-3333-4444-555555555555',
        clientSecret: 'the-client-secret',
        scopes: ['openid', 'profile', 'email'],
      },
      claims: { groups: 'roles' },
      clients: { metadataDocuments: { allow: ['claude'] }, registration: { enabled: false } },
      tokens: { accessTokenSeconds: 600 },
    },
  },
};
