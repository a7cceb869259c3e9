import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { expect } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { buildTestApp, type TestApp } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import type { AdminPrincipal } from '../src/admin/admin-principal.js';
import { previewRoutes } from '../src/admin/preview-route.js';
import type { PreviewResponse } from '../src/admin/preview-schema.js';
import { previewResponseSchema } from '../src/admin/preview-schema.js';
import { createPrincipalFingerprint } from '../src/principal-fingerprint.js';

// The gateway the preview tests talk to over real HTTP: three tenants (two
// trusting each their own local issuer, one anonymous), the preview route
// registered as the admin API will register it, behind a bearer check of a
// third local issuer (the operators' and admins' identity provider).

const SECRET = 'preview-test-secret-key-0123456789abcdef';
const ADMIN_AUDIENCE = 'mcpgw-admin';

const staticSource = (id: string, count: number) => ({
  id,
  type: 'static',
  resources: Array.from({ length: count }, (_, i) => ({
    uri: `test://${id}/${i}`,
    name: `${id}-${i}`,
    text: `secret body ${id} ${i}`,
  })),
});

/** The admin API's bearer check, built for this test from the admin issuer: operator role, or admin scope of one tenant. */
function adminBearerCheck(issuer: LocalIssuer) {
  const keys = createRemoteJWKSet(new URL(issuer.jwksUri));
  return async (request: FastifyRequest): Promise<AdminPrincipal | undefined> => {
    const header = request.headers.authorization;
    if (header === undefined || !header.startsWith('Bearer ')) return undefined;
    let payload;
    try {
      ({ payload } = await jwtVerify(header.slice(7), keys, { issuer: issuer.issuer, audience: ADMIN_AUDIENCE }));
    } catch {
      throw Object.assign(new Error('The admin token is not valid'), { statusCode: 401 });
    }
    const subject = payload.sub ?? '';
    if (payload.role === 'operator') return { kind: 'operator', issuer: issuer.issuer, subject, via: 'bearer' };
    if (typeof payload.tenant === 'string' && String(payload.scope).split(' ').includes('admin')) {
      return { kind: 'tenant-admin', tenantId: payload.tenant, issuer: issuer.issuer, subject, via: 'bearer' };
    }
    throw Object.assign(new Error('Not an admin'), { statusCode: 403 });
  };
}

export interface PreviewFixture {
  gateway: TestApp;
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
  /** A token of the admin issuer that names neither the operator role nor a tenant. */
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
    ],
  };
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  const port = await freePort();
  const logLines: string[] = [];
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const gateway = await buildTestApp({
    logStream,
    env: {
      HOST: '127.0.0.1',
      PORT: String(port),
      GATEWAY_CONFIG: join(dir, 'gateway.json'),
      SECRETS_KEY: SECRET,
      // Shedding has its own tests; on a busy test machine it would turn a comparison request into a 503.
      SHED_EVENT_LOOP_DELAY_MS: '0',
    },
  });
  const { app } = gateway;
  // As the admin API registers it: under /admin/v1, with its caller check and the app's registry.
  await app.register(previewRoutes, {
    prefix: '/admin/v1',
    authenticate: adminBearerCheck(idpAdmin),
    acquire: (tenantId) => app.tenants.acquire(tenantId),
    principalFingerprint: createPrincipalFingerprint(Buffer.from(SECRET, 'utf8')),
  });
  await app.listen({ host: '127.0.0.1', port });
  const baseUrl = `http://127.0.0.1:${port}`;

  const operatorToken = () => idpAdmin.token({ aud: ADMIN_AUDIENCE, sub: 'olga', role: 'operator' });
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
    acmeAdminToken: () => idpAdmin.token({ aud: ADMIN_AUDIENCE, sub: 'ann', tenant: 'acme', scope: 'admin' }),
    nonAdminToken: () => idpAdmin.token({ aud: ADMIN_AUDIENCE, sub: 'z' }),
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
