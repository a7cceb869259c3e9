/**
 * The assertion's verification alone, against the local test issuer (real
 * jose-signed JWTs, JWKS and discovery over loopback HTTP): where the keys
 * come from, the egress guard in front of their fetches, and the time and
 * algorithm rules that need a clock or a key the end-to-end test has not.
 */
import { randomUUID } from 'node:crypto';
import { createEgressGuard, silentLogger } from '@mcpgw/core';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAssertionKeyResolver, type AssertionKeyResolver } from '../../src/enterprise/assertion-issuer-keys.js';
import { AssertionRefused } from '../../src/enterprise/assertion-refused.js';
import { verifyIdentityAssertion } from '../../src/enterprise/verify-identity-assertion.js';

const AUDIENCE = 'https://gateway.example/t/acme/oauth';
const RESOURCE = 'https://gateway.example/t/acme/mcp';
const expected = { audience: AUDIENCE, clientId: 'connector', resources: [RESOURCE] };

let idp: LocalIssuer;
const resolvers: AssertionKeyResolver[] = [];

beforeAll(async () => {
  idp = await startLocalIssuer();
});
afterAll(async () => {
  for (const resolver of resolvers) resolver.close();
  await idp?.close();
});

function resolver(...args: Parameters<typeof createAssertionKeyResolver>): AssertionKeyResolver {
  const made = createAssertionKeyResolver(...args);
  resolvers.push(made);
  return made;
}

function claims(nowSeconds: number, overrides: JWTPayload = {}): JWTPayload {
  return {
    iss: idp.issuer,
    sub: 'U1',
    aud: AUDIENCE,
    client_id: 'connector',
    resource: RESOURCE,
    jti: randomUUID(),
    iat: nowSeconds,
    exp: nowSeconds + 120,
    ...overrides,
  };
}

async function refusalOf(promise: Promise<unknown>): Promise<AssertionRefused> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AssertionRefused);
  return error as AssertionRefused;
}

describe('key sources', () => {
  it('reads the JWKS named by the discovery metadata when the issuer is configured with discovery', async () => {
    const keys = resolver([{ issuer: idp.issuer, discovery: true }], { logger: silentLogger });
    const assertion = await idp.sign(claims(Math.floor(Date.now() / 1000)), { typ: 'oauth-id-jag+jwt' });
    const verified = await verifyIdentityAssertion(assertion, expected, { keys, now: Date.now });
    expect(verified).toMatchObject({ issuer: idp.issuer, subject: 'U1', resources: [RESOURCE] });
    expect(idp.hitCount('/.well-known/oauth-authorization-server')).toBeGreaterThan(0);
  });

  it("fetches keys only where the tenant's egress guard allows: a loopback JWKS is refused before anything is sent", async () => {
    const before = idp.hitCount('/jwks');
    const keys = resolver([{ issuer: idp.issuer, jwksUri: idp.jwksUri }], {
      egress: createEgressGuard(),
      logger: silentLogger,
    });
    const assertion = await idp.sign(claims(Math.floor(Date.now() / 1000)), { typ: 'oauth-id-jag+jwt' });
    const refusal = await refusalOf(verifyIdentityAssertion(assertion, expected, { keys, now: Date.now }));
    expect(refusal.reason).toBe('keys_unavailable');
    expect(idp.hitCount('/jwks')).toBe(before);
  });

  it('refuses, at construction, inline keys that are private or symmetric, and an issuer listed twice', () => {
    const privateJwk = { kty: 'RSA', n: 'AQAB', e: 'AQAB', d: 'AQAB' };
    expect(() =>
      createAssertionKeyResolver([{ issuer: idp.issuer, jwks: { keys: [privateJwk] } }], { logger: silentLogger }),
    ).toThrow(/public keys only/);
    expect(() =>
      createAssertionKeyResolver([{ issuer: idp.issuer, jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }], {
        logger: silentLogger,
      }),
    ).toThrow(/public keys only/);
    expect(() =>
      createAssertionKeyResolver(
        [
          { issuer: idp.issuer, discovery: true },
          { issuer: idp.issuer, jwksUri: idp.jwksUri },
        ],
        { logger: silentLogger },
      ),
    ).toThrow(/listed twice/);
  });
});

describe('time and algorithm', () => {
  const pinned = () =>
    resolver([{ issuer: idp.issuer, jwks: { keys: [{ kty: 'RSA', ...idp.rsa.publicJwk }] } }], {
      logger: silentLogger,
    });

  it('refuses an assertion issued in the future beyond the clock tolerance, and accepts one within it', async () => {
    const keys = pinned();
    const now = Date.parse('2030-01-01T00:00:00Z');
    const seconds = now / 1000;
    const early = await idp.sign(claims(seconds, { iat: seconds + 60, exp: seconds + 120 }), {
      typ: 'oauth-id-jag+jwt',
    });
    expect((await refusalOf(verifyIdentityAssertion(early, expected, { keys, now: () => now }))).reason).toBe(
      'issued_in_future',
    );
    const skewed = await idp.sign(claims(seconds, { iat: seconds + 20, exp: seconds + 120 }), {
      typ: 'oauth-id-jag+jwt',
    });
    await expect(verifyIdentityAssertion(skewed, expected, { keys, now: () => now })).resolves.toMatchObject({
      subject: 'U1',
    });
  });

  it('refuses an assertion that expired longer ago than the clock tolerance', async () => {
    const keys = pinned();
    const signedAt = Date.parse('2030-01-01T00:00:00Z');
    const assertion = await idp.sign(claims(signedAt / 1000), { typ: 'oauth-id-jag+jwt' });
    const later = signedAt + 121_000 + 31_000;
    expect((await refusalOf(verifyIdentityAssertion(assertion, expected, { keys, now: () => later }))).reason).toBe(
      'expired',
    );
  });

  it('refuses a symmetric algorithm (EMA section 7.4.1: an explicit allow-list of asymmetric algorithms)', async () => {
    const keys = pinned();
    const hmac = await new SignJWT(claims(Math.floor(Date.now() / 1000)))
      .setProtectedHeader({ alg: 'HS256', typ: 'oauth-id-jag+jwt' })
      .sign(new TextEncoder().encode('a shared secret of at least thirty-two bytes'));
    expect((await refusalOf(verifyIdentityAssertion(hmac, expected, { keys, now: Date.now }))).reason).toBe(
      'algorithm_not_allowed',
    );
  });

  it('refuses a header that carries its own key', async () => {
    const keys = pinned();
    const assertion = await idp.sign(claims(Math.floor(Date.now() / 1000)), {
      typ: 'oauth-id-jag+jwt',
      header: { jwk: idp.rsa.publicJwk },
    });
    expect((await refusalOf(verifyIdentityAssertion(assertion, expected, { keys, now: Date.now }))).reason).toBe(
      'key_reference_header',
    );
  });
});
