import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';

// The worked examples of docs/operations.md ("Keycloak" and "Microsoft Entra ID"), configured as
// written there and driven with tokens shaped like each provider's access tokens: real signatures
// from a local issuer standing in for the provider (neither runs here), over real HTTP.
//
// Keycloak: `typ` "JWT", realm roles nested in `realm_access.roles`, client roles in
// `resource_access.<client>.roles`, the tenant URL in `aud` from an audience mapper.
// Entra ID v2.0: `typ` "JWT", `aud` the application's client id (a GUID: Entra ignores RFC 8707
// `resource`), `iss` `https://login.microsoftonline.com/<tenant id>/v2.0`, delegated scopes in
// `scp` (space-delimited), app roles in `roles`, no `client_id` (the client is `azp`).

const ENTRA_TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const ENTRA_APP = '6e2b3c52-0b47-4a47-9d9a-1b1f3f6b8a10';

let keycloak: LocalIssuer;
let entra: LocalIssuer;
let gateway: StartedGateway;
let dir: string;

const endpoint = (tenant: string) => `${gateway.baseUrl}/t/${tenant}/mcp`;
const source = (id: string) => ({
  id,
  type: 'static',
  resources: [{ uri: `test://${id}/one`, name: `${id}-one`, text: id }],
});

async function listed(tenant: string, token: string): Promise<{ status: number; uris: string[] }> {
  const answer = await mcpPost<{ result?: { resources: { uri: string }[] } }>(
    endpoint(tenant),
    'resources/list',
    {},
    { authorization: `Bearer ${token}` },
  );
  return { status: answer.status, uris: (answer.body.result?.resources ?? []).map((r) => r.uri).sort() };
}

beforeAll(async () => {
  keycloak = await startLocalIssuer({ path: '/realms/acme' });
  entra = await startLocalIssuer({ path: `/${ENTRA_TENANT}/v2.0` });
  dir = await mkdtemp(join(tmpdir(), 'gw-providers-'));
  const file = join(dir, 'gateway.json');
  await writeFile(
    file,
    JSON.stringify({
      tenants: [
        {
          id: 'kc',
          auth: {
            issuers: [
              {
                issuer: keycloak.issuer,
                jwksUri: keycloak.jwksUri,
                tokenTypes: ['jwt'],
                groupsClaim: 'realm_access.roles',
              },
            ],
          },
          grants: [
            { name: 'readers', match: { groups: ['mcp-reader'] }, allow: [{ source: 'docs' }] },
            { name: 'finance', match: { groups: ['finance'] }, allow: [{ source: 'ledger' }] },
          ],
          sources: [source('docs'), source('ledger')],
        },
        {
          id: 'entra',
          auth: {
            issuers: [
              {
                issuer: entra.issuer,
                jwksUri: entra.jwksUri,
                tokenTypes: ['jwt'],
                audiences: [ENTRA_APP],
                scopeClaim: 'scp',
                groupsClaim: 'roles',
              },
            ],
            requiredScopes: ['mcp.read'],
          },
          grants: [
            { name: 'readers', match: { scopes: ['mcp.read'] }, allow: [{ source: 'docs' }] },
            { name: 'auditors', match: { groups: ['Ledger.Audit'] }, allow: [{ source: 'ledger' }] },
          ],
          sources: [source('docs'), source('ledger')],
        },
      ],
    }),
  );
  gateway = await startGateway({ configPath: file });
});

afterAll(async () => {
  await gateway?.close();
  await keycloak?.close();
  await entra?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('Keycloak-shaped access tokens', () => {
  const token = (roles: string[], clientRoles: string[] = []) =>
    keycloak.token(
      {
        aud: [endpoint('kc'), 'account'],
        azp: 'claude-connector',
        typ: 'Bearer',
        realm_access: { roles: ['offline_access', 'default-roles-acme', ...roles] },
        resource_access: { account: { roles: ['manage-account'] }, 'claude-connector': { roles: clientRoles } },
        scope: 'openid profile email',
      },
      { typ: 'JWT' },
    );

  it('matches grants on realm roles read from the nested realm_access.roles', async () => {
    expect(await listed('kc', await token(['mcp-reader']))).toEqual({ status: 200, uris: ['test://docs/one'] });
    expect(await listed('kc', await token(['mcp-reader', 'finance']))).toEqual({
      status: 200,
      uris: ['test://docs/one', 'test://ledger/one'],
    });
  });

  it('gives nothing for a role held only as a client role, or a role name in another claim', async () => {
    expect((await listed('kc', await token([], ['mcp-reader']))).uris).toEqual([]);
    const flat = await keycloak.token({ aud: endpoint('kc'), roles: ['mcp-reader'] }, { typ: 'JWT' });
    expect((await listed('kc', flat)).uris).toEqual([]);
  });

  it('refuses a token whose realm_access.roles is not a list of strings (401, not silently no roles)', async () => {
    const wrongType = await keycloak.token({ aud: endpoint('kc'), realm_access: { roles: [1] } }, { typ: 'JWT' });
    expect((await listed('kc', wrongType)).status).toBe(401);
  });
});

describe('Entra ID v2.0-shaped access tokens', () => {
  const token = (claims: Record<string, unknown>) => {
    const now = Math.floor(Date.now() / 1000);
    return entra.sign(
      {
        aud: ENTRA_APP,
        iss: entra.issuer,
        iat: now,
        nbf: now,
        exp: now + 3600,
        azp: 'b1f2c3d4-0000-4000-8000-00000000c1a0',
        azpacr: '0',
        oid: '00000000-0000-0000-66f3-3332eca7ea81',
        sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
        tid: ENTRA_TENANT,
        ver: '2.0',
        ...claims,
      },
      { typ: 'JWT' },
    );
  };

  it('accepts the application GUID as audience and reads delegated scopes from scp, app roles from roles', async () => {
    expect(await listed('entra', await token({ scp: 'mcp.read' }))).toEqual({
      status: 200,
      uris: ['test://docs/one'],
    });
    expect(await listed('entra', await token({ scp: 'mcp.read User.Read', roles: ['Ledger.Audit'] }))).toEqual({
      status: 200,
      uris: ['test://docs/one', 'test://ledger/one'],
    });
  });

  it('refuses a token without the required scope (403) and a v1.0 token of the same tenant (401)', async () => {
    expect((await listed('entra', await token({ scp: 'User.Read' }))).status).toBe(403);
    // v1.0 tokens name another issuer (https://sts.windows.net/<tenant id>/): trusting one version is not trusting both.
    const v1 = await token({ scp: 'mcp.read', iss: `https://sts.windows.net/${ENTRA_TENANT}/`, ver: '1.0' });
    expect((await listed('entra', v1)).status).toBe(401);
  });

  it('refuses a token minted for another application (an aud that is neither the GUID nor the tenant URL)', async () => {
    const other = await token({ scp: 'mcp.read', aud: '00000003-0000-0000-c000-000000000000' });
    expect((await listed('entra', other)).status).toBe(401);
  });
});
