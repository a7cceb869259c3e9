/**
 * The hosted authorization server's own steps in the tenant's audit log
 * (docs/admin-api.md, "Audit log"), through a real gateway over HTTP: a
 * client registers at tenant alpha's server, runs the code flow (the demo
 * login, which consents automatically), and presents a rotated refresh token
 * again. Tenant alpha's operator reads the audit log through the admin API;
 * tenant beta's log shows none of it, and no token or code appears anywhere.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followToRedirectUri } from '@mcpgw/test-helpers/follow-redirects';
import { type AuditEvent, readAuditLog } from '@mcpgw/test-helpers/audit-log';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { type LocalIssuer, startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { within } from '@mcpgw/test-helpers/within';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const SCOPE = 'mcp:read';
const DEMO_ACCOUNT = 'demo-user';

const tenant = (id: string) => ({
  id,
  auth: { issuers: [{ development: true }], requiredScopes: [SCOPE] },
  grants: [{ name: 'readers', match: { scopes: [SCOPE] }, allow: [{ source: 'notes' }] }],
  sources: [{ id: 'notes', type: 'static', resources: [{ uri: `test://${id}/hello`, name: 'hello', text: 'hi' }] }],
});

let gateway: StartedGateway;
let ops: LocalIssuer;
const issuerOf = (id: string) => `${gateway.baseUrl}/t/${id}/oauth`;
const resourceOf = (id: string) => `${gateway.baseUrl}/t/${id}/mcp`;

beforeAll(async () => {
  ops = await startLocalIssuer({ path: '/ops' });
  gateway = await startGateway({
    bootstrap: { document: { tenants: [tenant('alpha'), tenant('beta')] }, configDir: '.' },
    admin: {},
    env: { OPERATOR_ISSUER: ops.issuer, OPERATOR_JWKS_URI: ops.jwksUri },
  });
});
afterAll(async () => {
  await Promise.all([gateway?.close(), ops?.close()]);
});

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const auditOf = (id: string): Promise<AuditEvent[]> => readAuditLog(gateway.baseUrl, ops, id, { limit: '200' });

function token(id: string, form: Record<string, string>) {
  return json(`${issuerOf(id)}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
}

/** RFC 7591 registration of a public client, then the code flow (PKCE S256, RFC 8707 `resource`). */
async function registerAndSignIn(id: string) {
  const registered = await json(`${issuerOf(id)}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Audit Test Connector',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: `${SCOPE} offline_access`,
    }),
  });
  expect(registered.status).toBe(201);
  const clientId = String(registered.body.client_id);
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${issuerOf(id)}/authorize`);
  for (const [key, value] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: resourceOf(id),
    state: 'st',
  })) {
    url.searchParams.set(key, value);
  }
  const code = (await followToRedirectUri(url, REDIRECT_URI)).searchParams.get('code') ?? '';
  const redeemed = await token(id, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: verifier,
    resource: resourceOf(id),
  });
  expect(redeemed.status).toBe(200);
  return { clientId, code, redeemed: redeemed.body };
}

describe("the hosted authorization server's steps in the tenant's audit log", () => {
  it('records the registration and the consent with the account and client, then a refresh token reuse', async () => {
    const { clientId, code, redeemed } = await registerAndSignIn('alpha');

    let events: AuditEvent[] = [];
    await within(
      10_000,
      async () => {
        events = await auditOf('alpha');
        return events.some((event) => event.action === 'consent' && event.actor.clientId === clientId);
      },
      'the consent in the audit log',
    );
    const registration = events.find((event) => event.action === 'register' && event.targetId === clientId);
    expect(registration).toMatchObject({
      actor: { kind: 'client', subject: clientId, issuer: issuerOf('alpha'), clientId },
      targetType: 'oauth-client',
      after: { clientId, clientName: 'Audit Test Connector', redirectUris: [REDIRECT_URI] },
    });
    const consent = events.find((event) => event.action === 'consent' && event.actor.clientId === clientId);
    expect(consent).toMatchObject({
      actor: { kind: 'end-user', subject: DEMO_ACCOUNT, issuer: issuerOf('alpha'), clientId },
      targetType: 'oauth-grant',
      after: { clientId, accountId: DEMO_ACCOUNT, resources: { [resourceOf('alpha')]: [SCOPE] } },
    });
    const grantId = consent!.targetId;

    // RFC 9700 section 4.14.2: a rotated refresh token presented again ends the whole grant.
    const first = String(redeemed.refresh_token);
    const rotated = await token('alpha', { grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(rotated.status).toBe(200);
    const reused = await token('alpha', { grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(reused.body.error).toBe('invalid_grant');
    await within(
      10_000,
      async () => {
        events = await auditOf('alpha');
        return events.some((event) => event.action === 'revoke' && event.targetId === grantId);
      },
      'the revocation in the audit log',
    );
    expect(events.find((event) => event.action === 'revoke')).toMatchObject({
      actor: { kind: 'end-user', subject: DEMO_ACCOUNT, clientId },
      targetType: 'oauth-grant',
      targetId: grantId,
      after: { reason: 'refresh-token-reuse', clientId, accountId: DEMO_ACCOUNT },
    });

    // Never a token or a code, in any event.
    const text = JSON.stringify(events);
    for (const secret of [code, first, String(rotated.body.refresh_token), String(redeemed.access_token)]) {
      expect(text).not.toContain(secret);
    }

    // The other tenant's log holds none of it.
    const beta = await auditOf('beta');
    expect(beta.filter((event) => ['register', 'consent', 'revoke'].includes(event.action))).toEqual([]);
    expect(JSON.stringify(beta)).not.toContain(clientId);
  });
});
