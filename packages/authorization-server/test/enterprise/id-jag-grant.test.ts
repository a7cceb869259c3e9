/**
 * Enterprise-managed authorization end to end at the token endpoint: a real
 * oidc-provider per tenant (enterprise-tenant.ts; MemoryAdapter) with the
 * ID-JAG grant registered, and real identity providers (the local test
 * issuer: jose-signed assertions, JWKS over loopback HTTP) issuing the
 * assertions. Requirements cited: draft-ietf-oauth-identity-assertion-authz-grant
 * ("draft") and the MCP enterprise-managed authorization extension ("EMA").
 */
import { randomUUID } from 'node:crypto';
import { createEgressGuard, type Logger } from '@mcpgw/core';
import { newSigningKey, startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ID_JAG_GRANT_PROFILE, JWT_BEARER_GRANT_TYPE } from '../../src/enterprise/id-jag-grant-type.js';
import {
  CONNECTOR,
  OTHER_CONNECTOR,
  exchange,
  memoryReplayStore,
  startTenantServer,
  type TenantServer,
} from './enterprise-tenant.js';

let acmeIdp: LocalIssuer;
let globexIdp: LocalIssuer;
let strangerIdp: LocalIssuer;
let acme: TenantServer;
let globex: TenantServer;
let initech: TenantServer;
const acmeReplay = memoryReplayStore();
/** Everything acme's grant logged. */
const acmeLog: Array<{ obj: object; msg: string | undefined }> = [];
const recordingLogger: Logger = {
  debug: (obj, msg) => acmeLog.push({ obj, msg }),
  info: (obj, msg) => acmeLog.push({ obj, msg }),
  warn: (obj, msg) => acmeLog.push({ obj, msg }),
  error: (obj, msg) => acmeLog.push({ obj, msg }),
  child: () => recordingLogger,
};
/** Every assertion presented at acme. */
const presented: string[] = [];

beforeAll(async () => {
  [acmeIdp, globexIdp, strangerIdp] = await Promise.all([startLocalIssuer(), startLocalIssuer(), startLocalIssuer()]);
  [acme, globex, initech] = await Promise.all([
    // Keys by jwksUri, fetched through an egress guard that lets loopback through (as an operator's allowlist would).
    startTenantServer({
      tenant: 'acme',
      settings: {
        upstream: { demo: true },
        claims: { groups: 'roles', extra: { department: 'department' } },
        enterpriseManaged: { issuers: [{ issuer: acmeIdp.issuer, jwksUri: acmeIdp.jwksUri }] },
      },
      egress: createEgressGuard({ allow: ['127.0.0.1'] }),
      replay: acmeReplay,
      logger: recordingLogger,
    }),
    // Keys pinned inline; refresh tokens for assertions switched on.
    startTenantServer({
      tenant: 'globex',
      settings: {
        upstream: { demo: true },
        tokens: { refreshTokensForAssertions: true },
        enterpriseManaged: {
          issuers: [{ issuer: globexIdp.issuer, jwks: { keys: globexIdp.published.map((key) => key.publicJwk) } }],
        },
      },
    }),
    // No enterprise-managed authorization at all.
    startTenantServer({ tenant: 'initech', settings: { upstream: { demo: true } } }),
  ]);
});

afterAll(async () => {
  await Promise.all([acme, globex, initech].map((server) => server?.close()));
  await Promise.all([acmeIdp, globexIdp, strangerIdp].map((idp) => idp?.close()));
});

/** The claims of a valid ID-JAG from `idp` for `server` (draft section 3), with `overrides` laid over them. */
function claimsFor(idp: LocalIssuer, server: TenantServer, overrides: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: idp.issuer,
    sub: 'U019488227',
    aud: server.issuer,
    client_id: CONNECTOR.clientId,
    resource: server.resource,
    scope: 'resources:read chat.history',
    jti: randomUUID(),
    iat: now,
    exp: now + 300,
    email: 'ada@acme.example',
    roles: ['engineering'],
    department: 'research',
    ...overrides,
  };
}

async function idJag(idp: LocalIssuer, claims: JWTPayload, typ: string | null = 'oauth-id-jag+jwt'): Promise<string> {
  const assertion = await idp.sign(claims, { typ });
  presented.push(assertion);
  return assertion;
}

async function verifyAccessToken(token: string, server: TenantServer) {
  return jwtVerify(token, createLocalJWKSet(server.publicJwks), {
    issuer: server.issuer,
    audience: server.resource,
    typ: 'at+jwt',
    algorithms: ['RS256'],
  });
}

function expectRefused(answer: { status: number; body: Record<string, unknown> }, description: RegExp): void {
  expect(answer.status).toBe(400);
  expect(answer.body.error).toBe('invalid_grant');
  expect(answer.body.error_description).toMatch(description);
}

describe('metadata', () => {
  async function metadataOf(server: TenantServer): Promise<Record<string, unknown>> {
    const response = await fetch(`${server.issuer}/.well-known/openid-configuration`);
    return (await response.json()) as Record<string, unknown>;
  }

  it('advertises the JWT bearer grant and the ID-JAG profile where enterprise-managed authorization is configured (EMA section 6)', async () => {
    const metadata = await metadataOf(acme);
    expect(metadata.grant_types_supported).toContain(JWT_BEARER_GRANT_TYPE);
    expect(metadata.authorization_grant_profiles_supported).toEqual([ID_JAG_GRANT_PROFILE]);
  });

  it('advertises neither where it is not, and refuses the grant there', async () => {
    const metadata = await metadataOf(initech);
    expect(metadata.grant_types_supported).not.toContain(JWT_BEARER_GRANT_TYPE);
    expect(metadata).not.toHaveProperty('authorization_grant_profiles_supported');
    const answer = await exchange(initech, await idJag(acmeIdp, claimsFor(acmeIdp, initech)));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('unsupported_grant_type');
  });
});

describe('a valid exchange', () => {
  it('yields an RFC 9068 access token for the asserted resource, with the claims mapped as at a sign-in', async () => {
    const answer = await exchange(acme, await idJag(acmeIdp, claimsFor(acmeIdp, acme)));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: 'Bearer', scope: 'resources:read' });
    expect(answer.body.expires_in).toBe(900);
    // No refresh token unless tokens.refreshTokensForAssertions is set.
    expect(answer.body).not.toHaveProperty('refresh_token');

    const { payload } = await verifyAccessToken(String(answer.body.access_token), acme);
    expect(payload).toMatchObject({
      iss: acme.issuer,
      aud: acme.resource,
      sub: 'U019488227',
      client_id: CONNECTOR.clientId,
      // The asserted scope this server does not offer (chat.history) is left out.
      scope: 'resources:read',
      email: 'ada@acme.example',
      groups: ['engineering'],
      department: 'research',
    });
    expect(acme.accounts.get('U019488227')?.issuer).toBe(acmeIdp.issuer);
  });

  it('narrows to the requested scope, and refuses a request for none the assertion grants (EMA section 7.2.1)', async () => {
    const claims = claimsFor(acmeIdp, acme, { scope: 'resources:read resources:subscribe' });
    const narrowed = await exchange(acme, await idJag(acmeIdp, claims), { scope: 'resources:subscribe' });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('resources:subscribe');

    const none = await exchange(acme, await idJag(acmeIdp, claimsFor(acmeIdp, acme)), {
      scope: 'resources:subscribe',
    });
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('invalid_scope');
  });

  it('with refresh tokens for assertions switched on, issues one that renews the token for the same resource and account', async () => {
    const answer = await exchange(globex, await idJag(globexIdp, claimsFor(globexIdp, globex)));
    expect(answer.status).toBe(200);
    expect(typeof answer.body.refresh_token).toBe('string');

    const refreshed = await fetch(globex.tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CONNECTOR.clientId}:${CONNECTOR.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(answer.body.refresh_token) }),
    });
    const body = (await refreshed.json()) as Record<string, unknown>;
    expect(refreshed.status).toBe(200);
    const { payload } = await verifyAccessToken(String(body.access_token), globex);
    expect(payload).toMatchObject({ aud: globex.resource, sub: 'U019488227', scope: 'resources:read' });
  });
});

describe('refusals (draft section 4.4.1, EMA sections 7.4 and 7.6): invalid_grant saying what was wrong', () => {
  it('a JOSE typ other than oauth-id-jag+jwt, exactly', async () => {
    for (const typ of ['at+jwt', 'JWT', 'application/oauth-id-jag+jwt', null]) {
      expectRefused(await exchange(acme, await idJag(acmeIdp, claimsFor(acmeIdp, acme), typ)), /typ header/);
    }
  });

  it('an aud other than this authorization server', async () => {
    const claims = claimsFor(acmeIdp, acme, { aud: globex.issuer });
    expectRefused(await exchange(acme, await idJag(acmeIdp, claims)), /another authorization server: its aud must be/);
  });

  it('an assertion issued for another client', async () => {
    const claims = claimsFor(acmeIdp, acme, { client_id: OTHER_CONNECTOR.clientId });
    expectRefused(await exchange(acme, await idJag(acmeIdp, claims)), /issued for another client/);
  });

  it('a wrong or missing resource, or a resource parameter the assertion does not name', async () => {
    const wrong = claimsFor(acmeIdp, acme, { resource: globex.resource });
    expectRefused(await exchange(acme, await idJag(acmeIdp, wrong)), /another resource/);
    const missing = claimsFor(acmeIdp, acme, { resource: undefined });
    expectRefused(await exchange(acme, await idJag(acmeIdp, missing)), /names no resource/);
    const valid = await idJag(acmeIdp, claimsFor(acmeIdp, acme));
    expectRefused(await exchange(acme, valid, { resource: globex.resource }), /resource parameter/);
  });

  it('an expired assertion, and one that lives too long', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = claimsFor(acmeIdp, acme, { iat: now - 400, exp: now - 100 });
    expectRefused(await exchange(acme, await idJag(acmeIdp, expired)), /has expired/);
    const longLived = claimsFor(acmeIdp, acme, { exp: now + 3600 });
    expectRefused(await exchange(acme, await idJag(acmeIdp, longLived)), /lives longer than 300 seconds/);
  });

  it('a replayed jti, while a refused presentation does not spend it', async () => {
    const assertion = await idJag(acmeIdp, claimsFor(acmeIdp, acme));
    expectRefused(await exchange(acme, assertion, {}, OTHER_CONNECTOR), /another client/);
    expect((await exchange(acme, assertion)).status).toBe(200);
    expectRefused(await exchange(acme, assertion), /already used/);
  });

  it('two concurrent presentations of one assertion: exactly one gets a token', async () => {
    const assertion = await idJag(acmeIdp, claimsFor(acmeIdp, acme));
    const answers = await Promise.all([exchange(acme, assertion), exchange(acme, assertion)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
  });

  it('an issuer nobody trusts', async () => {
    const claims = claimsFor(strangerIdp, acme);
    expectRefused(await exchange(acme, await idJag(strangerIdp, claims)), /not an identity provider .* trusts/);
  });

  it('a bad signature: a key of the same kid the issuer never published, or a tampered payload', async () => {
    const impostor = await newSigningKey('RS256', acmeIdp.rsa.kid);
    const forged = await acmeIdp.sign(claimsFor(acmeIdp, acme), { key: impostor, typ: 'oauth-id-jag+jwt' });
    expectRefused(await exchange(acme, forged), /signature is invalid/);

    const [header, , signature] = (await idJag(acmeIdp, claimsFor(acmeIdp, acme))).split('.');
    const widened = Buffer.from(JSON.stringify(claimsFor(acmeIdp, acme, { scope: 'resources:subscribe' }))).toString(
      'base64url',
    );
    expectRefused(await exchange(acme, `${header}.${widened}.${signature}`), /signature is invalid/);
  });

  it("another tenant's issuer: an assertion trusted by one tenant is refused at the other", async () => {
    // Signed by globex's IdP for acme: acme does not trust that IdP.
    expectRefused(
      await exchange(acme, await idJag(globexIdp, claimsFor(globexIdp, acme))),
      /not an identity provider .* trusts/,
    );
    // Signed by acme's IdP, for acme, presented at globex: neither its issuer nor its audience is globex's.
    expectRefused(
      await exchange(globex, await idJag(acmeIdp, claimsFor(acmeIdp, acme))),
      /not an identity provider .* trusts/,
    );
    // Signed by globex's IdP, for globex, presented at acme.
    expectRefused(
      await exchange(acme, await idJag(globexIdp, claimsFor(globexIdp, globex))),
      /not an identity provider .* trusts/,
    );
  });

  it('missing required claims (draft section 3): sub, jti, iat', async () => {
    for (const claim of ['sub', 'jti', 'iat'] as const) {
      const claims = claimsFor(acmeIdp, acme, { [claim]: undefined });
      expectRefused(await exchange(acme, await idJag(acmeIdp, claims)), new RegExp(`no "${claim}" claim`));
    }
  });

  it('an assertion whose scopes are all unknown here (EMA section 7.6.2)', async () => {
    const claims = claimsFor(acmeIdp, acme, { scope: 'chat.read chat.history' });
    expectRefused(await exchange(acme, await idJag(acmeIdp, claims)), /None of the assertion's scopes is offered/);
  });

  it('malformed input never yields a server error', async () => {
    for (const assertion of ['', 'x', 'a.b.c', `${'A'.repeat(20_000)}.b.c`, 'eyJhbGciOiJub25lIn0.e30.']) {
      const answer = await exchange(acme, assertion);
      expect(answer.status).toBe(400);
      expect(['invalid_grant', 'invalid_request']).toContain(answer.body.error);
    }
    const answer = await exchange(acme, undefined);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_request');
  });
});

it('logs each refusal with its reason, and never an assertion (EMA section 7.4.2)', () => {
  const reasons = acmeLog.filter((entry) => entry.msg === 'identity assertion refused').map((entry) => entry.obj);
  expect(reasons).toContainEqual(expect.objectContaining({ reason: 'replayed', clientId: CONNECTOR.clientId }));
  expect(reasons).toContainEqual(expect.objectContaining({ reason: 'wrong_type' }));
  const logged = JSON.stringify(acmeLog);
  for (const assertion of presented) expect(logged).not.toContain(assertion.split('.')[2]);
});

it('records each accepted jti once, for at least the assertion lifetime', () => {
  const ttls = [...acmeReplay.keys.values()].map((until) => until - Date.now());
  expect(ttls.length).toBeGreaterThan(0);
  for (const ttl of ttls) {
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(330_000);
  }
});
