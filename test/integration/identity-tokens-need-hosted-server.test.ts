import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';

// An S3 source's per-caller identity tokens are verified by STS against the
// JWKS the tenant's hosted authorization server publishes. A tenant that
// trusts only outside issuers publishes none, so the gateway refuses to sign
// for it, saying what to configure, instead of signing tokens nothing can verify.

let idp: LocalIssuer;
let gateway: TestApp;

beforeAll(async () => {
  idp = await startLocalIssuer();
  gateway = await buildTestApp({
    bootstrap: {
      configDir: '.',
      document: {
        tenants: [
          {
            id: 'outside',
            auth: { issuers: [{ issuer: idp.issuer, jwksUri: idp.jwksUri }] },
            grants: [{ name: 'everyone', match: {}, allow: [{ source: 'docs' }] }],
            sources: [{ id: 'docs', type: 'static', resources: [{ uri: 'test://docs/a.md', name: 'a', text: 'a' }] }],
          },
          {
            id: 'hosted',
            authorizationServer: { upstream: { issuer: idp.issuer, clientId: 'gateway' } },
            grants: [{ name: 'everyone', match: {}, allow: [{ source: 'docs' }] }],
            sources: [{ id: 'docs', type: 'static', resources: [{ uri: 'test://docs/a.md', name: 'a', text: 'a' }] }],
          },
        ],
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await idp?.close();
});

describe("the keys a tenant's identity tokens are signed with", () => {
  it('are refused, naming the missing setting, for a tenant without a hosted authorization server', async () => {
    await expect(gateway.app.tenantSigningKeysOf('outside')).rejects.toThrow(
      /tenant 'outside' has no hosted authorization server.*\/t\/outside\/oauth\/jwks.*"authorizationServer"/,
    );
  });

  it("are the hosted server's own signing key, first, for a tenant with one", async () => {
    const keys = await gateway.app.tenantSigningKeysOf('hosted');
    expect(keys[0]).toMatchObject({ kty: 'RSA', kid: expect.any(String) });
    expect(keys[0]).toHaveProperty('d');
  });
});
