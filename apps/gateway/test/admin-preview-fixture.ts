import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { expect } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import type { PreviewResponse } from '@mcpgw/admin';
import { previewResponseSchema } from '@mcpgw/admin';

// The gateway the preview tests talk to over real HTTP: the app as `npm start`
// builds it, serving its tenants from a control plane (PGlite under the test's
// DATA_DIR) with the admin API on, so the preview is the row of the admin
// route table with the API's real authentication. Four tenants (two trusting
// each their own local issuer, one anonymous, one trusting acme's issuer too); operators come from a third
// local issuer (OPERATOR_ISSUER), acme's tenant admins from acme's own.

const SECRET = 'preview-test-secret-key-0123456789abcdef';
const ADMIN_SCOPE = 'gateway:admin';

const staticSource = (id: string, count: number) => ({
  id,
  type: 'static',
  resources: Array.from({ length: count }, (_, i) => ({
    uri: `test://${id}/${i}`,
    name: `${id}-${i}`,
    text: `secret body ${id} ${i}`,
  })),
});

export interface PreviewFixture {
  gateway: StartedGateway;
  baseUrl: string;
  idpAcme: LocalIssuer;
  idpGlobex: LocalIssuer;
  idpAdmin: LocalIssuer;
  /** The app's JSON log lines. */
  logLines: string[];
  /** A tenant's MCP endpoint. */
  resource(tenant: string): string;
  operatorToken(): Promise<string>;
  acmeAdminToken(): Promise<string>;
  /** A token of the operators' issuer, for the admin API, without the operator role. */
  nonAdminToken(): Promise<string>;
  preview(
    tenant: string,
    body: unknown,
    adminToken: string,
  ): Promise<{ status: number; type: string | null; text: string }>;
  /** A preview as the operator that must succeed, its answer checked against the response schema. */
  previewOk(tenant: string, body: unknown): Promise<PreviewResponse>;
  close(): Promise<void>;
}

export async function startPreviewFixture(): Promise<PreviewFixture> {
  const idpAcme = await startLocalIssuer({ path: '/acme' });
  const idpGlobex = await startLocalIssuer({ path: '/globex' });
  const idpAdmin = await startLocalIssuer({ path: '/admins' });
  const dir = await mkdtemp(join(tmpdir(), 'gw-preview-'));
  await mkdir(join(dir, 'handbook', 'eng'), { recursive: true });
  await writeFile(join(dir, 'handbook', 'eng', 'setup.md'), '# Setup\n');
  const config = {
    tenants: [
      {
        id: 'acme',
        auth: {
          issuers: [{ issuer: idpAcme.issuer, jwksUri: idpAcme.jwksUri, groupsClaim: 'groups' }],
          requiredScopes: ['mcp:read'],
        },
        grants: [
          { name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] },
          {
            name: 'finance',
            match: { groups: ['finance'] },
            allow: [{ source: 'ledger', uris: ['test://ledger/1*'] }],
          },
          {
            name: 'engineering',
            match: { groups: ['eng'] },
            allow: [{ source: 'handbook', uris: ['file:///handbook/eng/**', 'file:///handbook/archive/**'] }],
          },
        ],
        adminRoleBindings: [{ name: 'admins', scopes: [ADMIN_SCOPE] }],
        sources: [
          staticSource('docs', 150),
          staticSource('ledger', 20),
          { id: 'handbook', type: 'files', root: 'handbook' },
        ],
      },
      { id: 'open', anonymous: true, sources: [staticSource('notes', 3)] },
      {
        id: 'globex',
        auth: { issuers: [{ issuer: idpGlobex.issuer, jwksUri: idpGlobex.jwksUri }] },
        grants: [{ name: 'everyone', match: {}, allow: [{ source: 'plans' }] }],
        sources: [staticSource('plans', 3)],
      },
      {
        // Trusts acme's issuer too: the same caller, with the same claims, in a second tenant.
        id: 'initech',
        auth: { issuers: [{ issuer: idpAcme.issuer, jwksUri: idpAcme.jwksUri }] },
        grants: [{ name: 'everyone', match: {}, allow: [{ source: 'memos' }] }],
        sources: [staticSource('memos', 2)],
      },
    ],
  };
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  const logLines: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const gateway = await startGateway({
    configPath: join(dir, 'gateway.json'),
    admin: {},
    logStream,
    env: {
      SECRETS_KEY: SECRET,
      OPERATOR_ISSUER: idpAdmin.issuer,
      OPERATOR_JWKS_URI: idpAdmin.jwksUri,
      // Shedding has its own tests; on a busy test machine it would turn a comparison request into a 503.
      SHED_EVENT_LOOP_DELAY_MS: '0',
    },
  });
  const baseUrl = gateway.baseUrl;

  const operatorToken = () => idpAdmin.token({ aud: `${baseUrl}/admin/v1`, sub: 'olga', roles: ['gateway-operator'] });
  const preview: PreviewFixture['preview'] = async (tenant, body, adminToken) => {
    const response = await fetch(`${baseUrl}/admin/v1/tenants/${tenant}/preview`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify(body),
    });
    return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
  };
  return {
    gateway,
    baseUrl,
    idpAcme,
    idpGlobex,
    idpAdmin,
    logLines,
    resource: (tenant) => `${baseUrl}/t/${tenant}/mcp`,
    operatorToken,
    acmeAdminToken: () => idpAcme.token({ aud: `${baseUrl}/admin/v1/tenants/acme`, sub: 'ann', scope: ADMIN_SCOPE }),
    nonAdminToken: () => idpAdmin.token({ aud: `${baseUrl}/admin/v1`, sub: 'z' }),
    preview,
    async previewOk(tenant, body) {
      const answer = await preview(tenant, body, await operatorToken());
      expect(answer.status, answer.text).toBe(200);
      return previewResponseSchema.parse(JSON.parse(answer.text));
    },
    async close() {
      await gateway.close();
      await Promise.all([idpAcme.close(), idpGlobex.close(), idpAdmin.close()]);
    },
  };
}
