import { mkdtemp, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import { within } from '@mcpgw/test-helpers/within';

// End to end over real HTTP: two tenants, each trusting its own real
// issuer (real ES256 keys, JWKS and RFC 8414 metadata served on loopback), a
// gateway on a real port, every failure mode checked for status, challenge
// and JSON-RPC body, and the logs read back for any trace of a token.

let gateway: StartedGateway;
let idpA: LocalIssuer;
let idpB: LocalIssuer;
/** An authorization server of opaque tokens, trusted by two tenants through introspection. */
let idpC: LocalIssuer;
const logLines: string[] = [];

const resource = (tenant: string) => `${gateway.baseUrl}/t/${tenant}/mcp`;
const metadataUrl = (tenant: string) => `${gateway.baseUrl}/.well-known/oauth-protected-resource/t/${tenant}/mcp`;

beforeAll(async () => {
  idpA = await startLocalIssuer({ path: '/idp-a' });
  idpB = await startLocalIssuer({ path: '/idp-b' });
  idpC = await startLocalIssuer({ path: '/idp-c' });
  const introspection = { endpoint: idpC.introspectionEndpoint, clientId: 'gateway', clientSecret: 'not-logged' };
  const staticSource = (id: string, count: number) => ({
    id,
    type: 'static',
    resources: Array.from({ length: count }, (_, i) => ({
      uri: `test://${id}/${i}`,
      name: `${id}-${i}`,
      text: `${id} ${i}`,
    })),
  });
  const config = {
    tenants: [
      {
        id: 'acme',
        auth: {
          issuers: [{ issuer: idpA.issuer, jwksUri: idpA.jwksUri, groupsClaim: 'groups' }],
          requiredScopes: ['mcp:read'],
        },
        grants: [
          { name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] },
          {
            name: 'finance',
            match: { groups: ['finance'] },
            allow: [{ source: 'ledger', uris: ['test://ledger/1*'] }],
          },
        ],
        sources: [staticSource('docs', 150), staticSource('ledger', 20)],
      },
      {
        id: 'globex',
        auth: { issuers: [{ issuer: idpB.issuer, discovery: true }], requiredScopes: ['mcp:read'] },
        grants: [{ name: 'readers', match: {}, allow: [{ source: 'secrets' }] }],
        sources: [staticSource('secrets', 3)],
      },
      {
        id: 'initech',
        auth: { issuers: [{ issuer: idpC.issuer, introspection }] },
        grants: [{ name: 'readers', match: {}, allow: [{ source: 'payroll' }] }],
        sources: [staticSource('payroll', 2)],
      },
      {
        id: 'hooli',
        auth: {
          issuers: [
            {
              issuer: idpC.issuer,
              introspection: { ...introspection, dangerouslyAcceptMissingAudience: true, clientIds: ['hooli-agent'] },
            },
          ],
        },
        grants: [{ name: 'readers', match: {}, allow: [{ source: 'designs' }] }],
        sources: [staticSource('designs', 2)],
      },
    ],
  };
  const dir = await mkdtemp(join(tmpdir(), 'gw-auth-'));
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  gateway = await startGateway({ configPath: join(dir, 'gateway.json'), logStream, env: { LOG_LEVEL: 'debug' } });
});

afterAll(async () => {
  await gateway?.close();
  await idpA?.close();
  await idpB?.close();
  await idpC?.close();
});

async function post(
  tenant: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const response = await fetch(resource(tenant), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params: { ...params, _meta: MODERN_META } }),
  });
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: (await response.json()) as JsonRpcBody,
  };
}
/** The parts of a JSON-RPC response these tests read. */
interface JsonRpcBody {
  id?: number;
  result: { resources: Array<{ uri: string }>; nextCursor?: string; cacheScope: string };
  error?: { code: number; message: string; data?: unknown };
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const goodToken = (overrides: Record<string, unknown> = {}) =>
  idpA.token({ aud: resource('acme'), scope: 'mcp:read', ...overrides });

describe('protected resource metadata (RFC 9728)', () => {
  it('lists exactly the tenant canonical URI and its own authorization servers', async () => {
    const acme = await (await fetch(metadataUrl('acme'))).json();
    expect(acme).toMatchObject({
      resource: resource('acme'),
      authorization_servers: [idpA.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: expect.arrayContaining(['mcp:read']),
    });
    const globex = (await (await fetch(metadataUrl('globex'))).json()) as { authorization_servers: string[] };
    expect(globex.authorization_servers).toEqual([idpB.issuer]);
    expect((await fetch(`${gateway.baseUrl}/.well-known/oauth-protected-resource/t/nobody/mcp`)).status).toBe(404);
  });
});

describe('challenges', () => {
  it('no token → 401 with resource_metadata and scope, without an error code', async () => {
    const response = await post('acme', 'resources/list', {});
    expect(response.status).toBe(401);
    expect(response.challenge).toBe(`Bearer resource_metadata="${metadataUrl('acme')}", scope="mcp:read"`);
    expect(response.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    // Refused before the body is read, so there is no request id to echo (MCP: omitted, never null).
    expect(response.body).not.toHaveProperty('id');
  });

  it.each([
    ['expired', () => goodToken({ exp: Math.floor(Date.now() / 1000) - 3600 })],
    ['not yet valid', () => goodToken({ nbf: Math.floor(Date.now() / 1000) + 3600 })],
    ['issued in the future', () => goodToken({ iat: Math.floor(Date.now() / 1000) + 3600 })],
    ['for another audience', () => goodToken({ aud: 'https://elsewhere.example/mcp' })],
    ['for the other tenant', () => goodToken({ aud: resource('globex') })],
    ['from the other tenant issuer', () => idpB.token({ aud: resource('acme'), scope: 'mcp:read' })],
    ['with a broken signature', async () => `${(await goodToken()).slice(0, -4)}AAAA`],
    ['not a JWT', async () => 'opaque-token-nobody-introspects'],
    [
      'with a jku header',
      () => idpA.token({ aud: resource('acme'), scope: 'mcp:read' }, { jku: 'https://evil.example/jwks' }),
    ],
    ['of the wrong typ', () => idpA.token({ aud: resource('acme'), scope: 'mcp:read' }, { typ: 'id+jwt' })],
    // RFC 9068 section 4: by default only at+jwt; an ID token says JWT or nothing (RFC 8725 section 3.11).
    ['of typ JWT (not configured)', () => idpA.token({ aud: resource('acme'), scope: 'mcp:read' }, { typ: 'JWT' })],
    [
      'without typ (not configured)',
      () => idpA.token({ aud: resource('acme'), scope: 'mcp:read' }, { typ: undefined }),
    ],
    [
      'with an x5c header',
      () => idpA.token({ aud: resource('acme'), scope: 'mcp:read' }, { x5c: ['bm90IGEgY2VydGlmaWNhdGU='] }),
    ],
  ])('a token %s → 401 invalid_token', async (_name, makeToken) => {
    const response = await post('acme', 'resources/list', {}, bearer(await makeToken()));
    expect(response.status).toBe(401);
    expect(response.challenge).toMatch(
      new RegExp(`^Bearer resource_metadata="${metadataUrl('acme')}", scope="mcp:read", error="invalid_token"`),
    );
    expect(response.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });

  it.each(['Basic dXNlcjpwYXNz', 'DPoP eyJhbGciOi.e30.sig', 'Negotiate'])(
    'another scheme (%s) → 401 with the plain challenge, without an error code (RFC 6750 section 3.1)',
    async (authorization) => {
      const response = await post('acme', 'resources/list', {}, { authorization });
      expect(response.status).toBe(401);
      expect(response.challenge).toBe(`Bearer resource_metadata="${metadataUrl('acme')}", scope="mcp:read"`);
      expect(response.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    },
  );

  it('a token without the required scope → 403 insufficient_scope naming the scope', async () => {
    const response = await post('acme', 'resources/list', {}, bearer(await goodToken({ scope: 'profile' })));
    expect(response.status).toBe(403);
    expect(response.challenge).toContain('error="insufficient_scope"');
    expect(response.challenge).toContain('scope="mcp:read"');
    expect(response.challenge).toContain(`resource_metadata="${metadataUrl('acme')}"`);
    expect(response.body).toMatchObject({ error: { code: -32600, message: expect.stringContaining('mcp:read') } });
  });

  it('a token in the query string → 400 invalid_request', async () => {
    const token = await goodToken();
    const response = await fetch(`${resource('acme')}?access_token=${token}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'resources/list',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: MODERN_META } }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_request"');
  });

  it('two Authorization headers → 400 invalid_request', async () => {
    const token = await goodToken();
    const url = new URL(resource('acme'));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/list', params: { _meta: MODERN_META } });
    // Raw bytes on a socket: HTTP clients merge or refuse repeated Authorization headers.
    const head = [
      `POST ${url.pathname} HTTP/1.1`,
      `Host: ${url.host}`,
      'Content-Type: application/json',
      'MCP-Protocol-Version: 2026-07-28',
      'Mcp-Method: resources/list',
      `Authorization: Bearer ${token}`,
      'Authorization: Bearer another-token',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
    ].join('\r\n');
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.end(`${head}\r\n\r\n${body}`));
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('utf8')));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toMatch(/www-authenticate: Bearer .*error="invalid_request"/i);
  });
});

describe('the caller resource set', () => {
  async function listAll(tenant: string, token: string): Promise<string[]> {
    const uris: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page += 1) {
      const response = await post(tenant, 'resources/list', cursor === undefined ? {} : { cursor }, bearer(token));
      expect(response.status).toBe(200);
      expect(response.body.result.cacheScope).toBe('private');
      uris.push(...response.body.result.resources.map((r: { uri: string }) => r.uri));
      cursor = response.body.result.nextCursor;
      if (cursor === undefined) return uris;
    }
    throw new Error('listing did not end');
  }

  it('depends on the grants that match the verified claims', async () => {
    const reader = await listAll('acme', await goodToken());
    expect(reader).toHaveLength(150);
    expect(reader.every((uri) => uri.startsWith('test://docs/'))).toBe(true);
    const financier = await listAll('acme', await goodToken({ groups: ['finance'] }));
    expect(financier.filter((uri) => uri.startsWith('test://ledger/'))).toEqual([
      'test://ledger/1',
      ...Array.from({ length: 10 }, (_, i) => `test://ledger/1${i}`),
    ]);
  });

  it('answers a read outside the set exactly like a missing resource', async () => {
    const token = await goodToken();
    const hidden = await post(
      'acme',
      'resources/read',
      { uri: 'test://ledger/1' },
      { ...bearer(token), 'mcp-name': 'test://ledger/1' },
    );
    const missing = await post(
      'acme',
      'resources/read',
      { uri: 'test://ledger/999' },
      { ...bearer(token), 'mcp-name': 'test://ledger/999' },
    );
    expect(hidden.body.error).toEqual({
      code: -32602,
      message: 'Resource not found',
      data: { uri: 'test://ledger/1' },
    });
    expect(missing.body.error).toEqual({
      code: -32602,
      message: 'Resource not found',
      data: { uri: 'test://ledger/999' },
    });
  });

  it('refuses a cursor minted for another principal', async () => {
    const alice = await goodToken({ sub: 'alice' });
    const bob = await goodToken({ sub: 'bob' });
    const first = await post('acme', 'resources/list', {}, bearer(alice));
    const cursor = first.body.result.nextCursor as string;
    expect((await post('acme', 'resources/list', { cursor }, bearer(alice))).status).toBe(200);
    const stolen = await post('acme', 'resources/list', { cursor }, bearer(bob));
    expect(stolen.body.error).toMatchObject({ code: -32602 });
  });

  it('discovers the other tenant keys through its metadata and keeps tenants apart', async () => {
    const globexToken = await idpB.token({ aud: resource('globex'), scope: 'mcp:read' });
    expect(await listAll('globex', globexToken)).toEqual(['test://secrets/0', 'test://secrets/1', 'test://secrets/2']);
    expect((await post('acme', 'resources/list', {}, bearer(globexToken))).status).toBe(401);
    expect((await post('globex', 'resources/list', {}, bearer(await goodToken()))).status).toBe(401);
  });
});

describe('opaque tokens and audience binding (MCP "Token Audience Binding", RFC 8707)', () => {
  const opaque = (answer: Record<string, unknown>) => {
    const token = `opaque-${crypto.randomUUID()}`;
    idpC.opaqueTokens.set(token, {
      active: true,
      sub: 'mallory',
      exp: Math.floor(Date.now() / 1000) + 300,
      ...answer,
    });
    return token;
  };

  it('an active token without aud, minted for another API of the same server, reads nothing', async () => {
    const stray = opaque({ client_id: 'billing-api' });
    const response = await post('initech', 'resources/list', {}, bearer(stray));
    expect(response.status).toBe(401);
    expect(response.challenge).toContain('error="invalid_token"');
    expect(response.challenge).toContain('names no audience');
    expect(response.body).not.toHaveProperty('result');
    // The same server's token for this tenant is fine.
    const bound = await post('initech', 'resources/list', {}, bearer(opaque({ aud: resource('initech') })));
    expect(bound.status).toBe(200);
    expect(bound.body.result.resources.map((r) => r.uri)).toEqual(['test://payroll/0', 'test://payroll/1']);
    // …and not for the other tenant trusting the same server.
    expect((await post('initech', 'resources/list', {}, bearer(opaque({ aud: resource('hooli') })))).status).toBe(401);
  });

  it('dangerouslyAcceptMissingAudience lets in audience-less tokens of the listed clients only', async () => {
    const listed = await post('hooli', 'resources/list', {}, bearer(opaque({ client_id: 'hooli-agent' })));
    expect(listed.status).toBe(200);
    const stranger = await post('hooli', 'resources/list', {}, bearer(opaque({ client_id: 'billing-api' })));
    expect(stranger.status).toBe(401);
    expect(stranger.challenge).toContain('error="invalid_token"');
  });

  it('dangerouslyAcceptMissingAudience is warned about when the tenant loads', () => {
    const warnings = logLines
      .map((line) => JSON.parse(line) as { level: number; tenant?: string; msg?: string; clientIds?: string[] })
      .filter((entry) => entry.level === 40 && /without an audience/.test(entry.msg ?? ''));
    expect(warnings.map((w) => [w.tenant, w.clientIds])).toEqual([['hooli', ['hooli-agent']]]);
    expect(logLines.some((line) => line.includes('not-logged'))).toBe(false);
  });
});

describe('logs', () => {
  it('never contain a token, even a refused one or one put in the URL', async () => {
    const tokens = [
      await goodToken(),
      await goodToken({ aud: 'https://x.example' }),
      await idpB.token({ aud: resource('acme') }),
    ];
    // Each request's access line is written once its response has finished, maybe after the client has it.
    const accessLines = () => logLines.filter((line) => line.includes('"msg":"request"')).length;
    const before = accessLines();
    for (const token of tokens) await post('acme', 'resources/list', {}, bearer(token));
    await fetch(`${resource('acme')}?access_token=${tokens[0]}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    await within(10_000, () => expect(accessLines()).toBeGreaterThanOrEqual(before + 4), 'four access lines');
    expect(logLines.length).toBeGreaterThan(5);
    for (const token of tokens) {
      const signature = token.split('.')[2]!;
      expect(logLines.filter((line) => line.includes(signature))).toEqual([]);
    }
  });
});
