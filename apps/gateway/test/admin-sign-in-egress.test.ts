import { createEgressGuard } from '@mcpgw/core';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInClient, type SignInClientSettings } from '../src/admin/sign-in/sign-in-client.js';

// Admin browser sign-in against an issuer a tenant admin wrote reads its
// discovery metadata under the egress policy (docs/configuration.md, "Egress
// policy"): a loopback issuer is refused before any request reaches it.

let idp: LocalIssuer;

beforeAll(async () => {
  idp = await startLocalIssuer({ path: '/acme' });
});
afterAll(async () => {
  await idp.close();
});

const settings = (extra: Partial<SignInClientSettings>): SignInClientSettings => ({
  cookiePath: '/admin/v1/tenants/acme',
  signIn: { clientId: 'gateway-admin', scopes: ['openid'], maxSessionSeconds: 3600 },
  issuer: idp.issuer,
  resource: 'http://127.0.0.1:1/admin/v1/tenants/acme',
  secure: false,
  callbackUri: () => 'http://127.0.0.1:1/admin/v1/tenants/acme/callback',
  fetch,
  ...extra,
});

const hits = () => [...idp.hits.values()].reduce((sum, count) => sum + count, 0);

describe('admin sign-in discovery under the egress guard', () => {
  it('refuses a loopback issuer a tenant admin wrote, naming the setting', async () => {
    const before = hits();
    await expect(createSignInClient(settings({ egress: createEgressGuard() }))).rejects.toThrow(
      /refused by the egress policy.*EGRESS_ALLOW/,
    );
    expect(hits()).toBe(before);
  });

  it('reaches the same issuer when the allowlist names it, or when an operator wrote it', async () => {
    // The test issuer publishes no authorization endpoint: reaching it ends in that complaint, not a refusal.
    for (const egress of [createEgressGuard({ allow: ['127.0.0.1'] }), undefined]) {
      const before = hits();
      await expect(createSignInClient(settings({ egress }))).rejects.toThrow(/"authorization_endpoint" is missing/);
      expect(hits()).toBeGreaterThan(before);
    }
  });
});
