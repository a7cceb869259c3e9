import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previewResponseSchema } from '@mcpgw/admin';
import { createSourceRegistry } from '@mcpgw/gateway/testing';
import { createIdentityTokenMinter, createS3SourceFactory } from '@mcpgw/source-s3';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';

// "Preview as" for an S3 source that reads under each caller's own STS
// session (callerIdentity): the admin is shown the role ARN, the session name
// and the session tags the caller would get, by the function the source's
// reads and cache keys use, and never a credential. Previewing asks no STS
// and no bucket: the identity is a pure function of the claims. Real
// gateway, real admin API, real signed tokens.

const FINANCE = 'arn:aws:iam::123456789012:role/reports-finance';
const STAFF = 'arn:aws:iam::123456789012:role/reports-staff';
const SERVICE_KEY = 'AKIDSERVICEKEY000000';
const SERVICE_SECRET = 'service-secret-never-shown';

let tenantIdp: LocalIssuer;
let operators: LocalIssuer;
let gateway: StartedGateway;

beforeAll(async () => {
  [tenantIdp, operators] = await Promise.all([startLocalIssuer({ path: '/acme' }), startLocalIssuer({ path: '/ops' })]);
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const minter = createIdentityTokenMinter({
    signingKey: () => ({ privateJwk: privateKey.export({ format: 'jwk' }), kid: 'test-key' }),
    issuer: (tenantId) => `http://127.0.0.1:1/t/${tenantId}/oauth`,
  });
  const registry = new Map(createSourceRegistry());
  registry.set('s3', createS3SourceFactory({ mintIdentityToken: minter }) as never);
  gateway = await startGateway({
    bootstrap: {
      configDir: await mkdtemp(join(tmpdir(), 'gw-s3-preview-')),
      document: {
        tenants: [
          {
            id: 'acme',
            auth: { issuers: [{ issuer: tenantIdp.issuer, jwksUri: tenantIdp.jwksUri, groupsClaim: 'groups' }] },
            grants: [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'reports' }] }],
            sources: [
              {
                id: 'reports',
                type: 's3',
                // Nothing listens here: a preview must not need the bucket or STS.
                endpoint: 'http://127.0.0.1:9',
                bucket: 'reports',
                forcePathStyle: true,
                changeDetection: { mode: 'off' },
                credentials: { accessKeyId: SERVICE_KEY, secretAccessKey: SERVICE_SECRET },
                callerIdentity: {
                  roleArns: [FINANCE, STAFF],
                  stsEndpoint: 'http://127.0.0.1:9/sts',
                  mapping: [{ match: { groups: ['finance'] }, roleArn: FINANCE }],
                  sessionTags: { team: 'groups', tenant: 'tenant' },
                },
              },
            ],
          },
        ],
      },
    },
    registry,
    admin: {},
    env: {
      SECRETS_KEY: 'an s3 preview test secret of at least thirty-two characters',
      OPERATOR_ISSUER: operators.issuer,
      OPERATOR_JWKS_URI: operators.jwksUri,
    },
  });
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([tenantIdp?.close(), operators?.close()]);
});

async function previewOf(claims: Record<string, unknown>): Promise<{ text: string; body: unknown }> {
  const token = await operators.token({
    aud: `${gateway.baseUrl}/admin/v1`,
    sub: 'olga',
    roles: ['gateway-operator'],
  });
  const response = await fetch(`${gateway.baseUrl}/admin/v1/tenants/acme/preview`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ claims }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { text, body: previewResponseSchema.parse(JSON.parse(text)) };
}

describe('preview as, for an S3 source with caller identity', () => {
  it('shows the role, session name and tags a mapped caller would get, never a credential', async () => {
    const { text, body } = await previewOf({ sub: 'ann@example.com', scope: 'staff', groups: ['finance', 'emea'] });
    expect((body as { backendIdentities?: unknown }).backendIdentities).toEqual([
      {
        source: 'reports',
        identity: {
          roleArn: FINANCE,
          roleSessionName: 'ann@example.com',
          sessionTags: { team: 'emea finance', tenant: 'acme' },
        },
      },
    ]);
    expect(text).not.toContain(SERVICE_KEY);
    expect(text).not.toContain(SERVICE_SECRET);
  });

  it('shows a caller the mapping does not know as refused', async () => {
    const { body } = await previewOf({ sub: 'bo', scope: 'staff', groups: ['visitors'] });
    expect((body as { backendIdentities?: unknown }).backendIdentities).toEqual([
      { source: 'reports', identity: { refused: true } },
    ]);
  });
});
