import { silentLogger } from '@mcpgw/core';
import { base64url, exportSPKI, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth-error.js';
import { createTokenVerifier, type TokenVerifier } from '../src/token-verifier.js';
import type { IssuerSettings } from '../src/issuer-settings.js';
import { fakeClock } from './fake-clock.js';
import { newSigningKey, startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';

const RESOURCE = 'https://gw.example.com/t/acme/mcp';
const clock = fakeClock();
const nowS = () => Math.floor(clock.now() / 1000);

let idp: LocalIssuer;
let other: LocalIssuer;
let verifier: TokenVerifier;

function settings(issuer: LocalIssuer, extra: Partial<IssuerSettings> = {}): IssuerSettings {
  return {
    issuer: issuer.issuer,
    keys: { jwksUri: issuer.jwksUri },
    algorithms: ['RS256', 'ES256'],
    audiences: ['api://acme'],
    tokenTypes: ['at+jwt', 'jwt'],
    scopeClaim: 'scope',
    groupsClaim: 'groups',
    clockToleranceSeconds: 30,
    ...extra,
  };
}

function claims(overrides: JWTPayload = {}): JWTPayload {
  return {
    iss: idp.issuer,
    sub: 'alice',
    aud: RESOURCE,
    iat: nowS(),
    exp: nowS() + 300,
    scope: 'mcp:read files:read',
    groups: ['eng'],
    client_id: 'connector',
    ...overrides,
  };
}

async function refusal(token: string, v: TokenVerifier = verifier): Promise<AuthError> {
  const error = await v.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the token must be refused').toBeInstanceOf(AuthError);
  const authError = error as AuthError;
  expect(authError.code).toBe('invalid_token');
  expect(authError.message).not.toContain(token);
  return authError;
}

beforeAll(async () => {
  idp = await startLocalIssuer({ path: '/realms/acme' });
  other = await startLocalIssuer({ path: '/realms/globex' });
  verifier = createTokenVerifier({
    resource: RESOURCE,
    issuers: [settings(idp)],
    logger: silentLogger,
    now: clock.now,
  });
});

afterAll(async () => {
  verifier.close();
  await idp.close();
  await other.close();
});

describe('valid tokens', () => {
  it('accepts an RS256 at+jwt and maps its claims to the Principal', async () => {
    const token = await idp.sign(claims());
    await expect(verifier.verify(token)).resolves.toEqual({
      issuer: idp.issuer,
      subject: 'alice',
      clientId: 'connector',
      scopes: ['mcp:read', 'files:read'],
      groups: ['eng'],
      expiresAt: nowS() + 300,
    });
  });

  it('accepts an ES256 token, an extra audience, typ "JWT" and application/at+jwt', async () => {
    const es = await idp.sign(claims({ aud: ['other', 'api://acme'] }), { key: idp.ec, typ: 'JWT' });
    expect((await verifier.verify(es)).subject).toBe('alice');
    const prefixed = await idp.sign(claims({ sub: 'bob' }), { typ: 'application/AT+JWT' });
    expect((await verifier.verify(prefixed)).subject).toBe('bob');
  });

  it('takes clientId from azp when client_id is absent and reads an array scp claim', async () => {
    const v = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings(idp, { scopeClaim: 'scp', groupsClaim: undefined })],
      logger: silentLogger,
      now: clock.now,
    });
    const token = await idp.sign(claims({ client_id: undefined, azp: 'spa', scp: ['a', 'b'] }));
    const principal = await v.verify(token);
    expect(principal).toMatchObject({ clientId: 'spa', scopes: ['a', 'b'], groups: [] });
    v.close();
  });

  it('accepts a token within the clock tolerance of exp and nbf', async () => {
    const token = await idp.sign(claims({ exp: nowS() - 20, nbf: nowS() + 20, iat: nowS() + 20 }));
    expect((await verifier.verify(token)).subject).toBe('alice');
  });
});

describe('refused tokens', () => {
  it('bad signature: a byte of the signature changed', async () => {
    const token = await idp.sign(claims());
    const [h, p, s] = token.split('.') as [string, string, string];
    const sig = base64url.decode(s);
    sig[10] = sig[10]! ^ 0xff;
    const error = await refusal(`${h}.${p}.${base64url.encode(sig)}`);
    expect(error.message).toMatch(/signature/);
  });

  it('bad signature: claims altered after signing', async () => {
    const token = await idp.sign(claims());
    const [h, , s] = token.split('.') as [string, string, string];
    const forged = base64url.encode(JSON.stringify(claims({ scope: 'admin' })));
    expect((await refusal(`${h}.${forged}.${s}`)).message).toMatch(/signature/);
  });

  it('wrong key: signed by a key the issuer never published, under a published kid', async () => {
    const attacker = await newSigningKey('RS256', 'rsa-1');
    expect((await refusal(await idp.sign(claims(), { key: attacker }))).message).toMatch(/signature/);
  });

  it('wrong key: an unknown kid', async () => {
    const attacker = await newSigningKey('RS256', 'attacker');
    expect((await refusal(await idp.sign(claims(), { key: attacker }))).message).toMatch(/No key/);
  });

  it('unknown iss', async () => {
    const error = await refusal(await idp.sign(claims({ iss: 'https://evil.example.com' })));
    expect(error.message).toMatch(/issuer this resource trusts/);
  });

  it('iss differing only by a trailing slash is a different issuer (exact match)', async () => {
    await refusal(await idp.sign(claims({ iss: `${idp.issuer}/` })));
  });

  it("another tenant's issuer: a real token of the other IdP, and one claiming our iss with its key", async () => {
    const theirs = await other.sign(claims({ iss: other.issuer }));
    expect((await refusal(theirs)).message).toMatch(/issuer this resource trusts/);
    const impersonating = await other.sign(claims());
    expect((await refusal(impersonating)).message).toMatch(/signature/);
  });

  it('wrong aud (another tenant’s resource URI, or none)', async () => {
    const error = await refusal(await idp.sign(claims({ aud: 'https://gw.example.com/t/globex/mcp' })));
    expect(error.message).toMatch(/not issued for this resource/);
    await refusal(await idp.sign(claims({ aud: undefined })));
  });

  it('expired beyond the tolerance', async () => {
    expect((await refusal(await idp.sign(claims({ exp: nowS() - 31 })))).message).toMatch(/expired/);
  });

  it('nbf in the future beyond the tolerance', async () => {
    expect((await refusal(await idp.sign(claims({ nbf: nowS() + 60 })))).message).toMatch(/not valid yet/);
  });

  it('iat in the future beyond the tolerance', async () => {
    expect((await refusal(await idp.sign(claims({ iat: nowS() + 60 })))).message).toMatch(/issued in the future/);
  });

  it('typ not allowed: absent when "none" is not configured, or another type', async () => {
    await refusal(await idp.sign(claims(), { typ: null }));
    expect((await refusal(await idp.sign(claims(), { typ: 'id_token+jwt' }))).message).toMatch(/typ/);
    const atOnly = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings(idp, { tokenTypes: ['at+jwt'] })],
      logger: silentLogger,
      now: clock.now,
    });
    await refusal(await idp.sign(claims(), { typ: 'JWT' }), atOnly);
    atOnly.close();
  });

  it('typ absent is accepted only when tokenTypes has "none"', async () => {
    const v = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings(idp, { tokenTypes: ['none'] })],
      logger: silentLogger,
      now: clock.now,
    });
    expect((await v.verify(await idp.sign(claims(), { typ: null }))).subject).toBe('alice');
    await refusal(await idp.sign(claims()), v);
    v.close();
  });

  it('crit naming an unknown extension', async () => {
    const token = await idp.sign(claims(), {
      header: { crit: ['urn:example:x'], 'urn:example:x': 1 },
      crit: { 'urn:example:x': true },
    });
    expect((await refusal(token)).message).toMatch(/feature/);
  });

  it('alg none (an unsecured JWT)', async () => {
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: 'rsa-1' }));
    const payload = base64url.encode(JSON.stringify(claims()));
    expect((await refusal(`${header}.${payload}.`)).message).toMatch(/algorithm/);
  });

  it('HS256 signed with the public key as the secret (algorithm confusion)', async () => {
    const pem = await exportSPKI(idp.rsa.publicKey);
    for (const secret of [pem, JSON.stringify(idp.rsa.publicJwk)]) {
      const token = await new SignJWT(claims())
        .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1', typ: 'at+jwt' })
        .sign(new TextEncoder().encode(secret));
      expect((await refusal(token)).message).toMatch(/algorithm/);
    }
  });

  it('an algorithm outside the issuer allowlist (ES256 token, RS256-only issuer)', async () => {
    const v = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings(idp, { algorithms: ['RS256'] })],
      logger: silentLogger,
      now: clock.now,
    });
    await refusal(await idp.sign(claims(), { key: idp.ec }), v);
    v.close();
  });

  it('jku, x5u, x5c and embedded jwk headers, even when the signature checks out', async () => {
    const attacker = await newSigningKey('RS256', 'rsa-1');
    const cases: Array<[Record<string, unknown>, Awaited<ReturnType<typeof newSigningKey>>]> = [
      [{ jku: `${idp.origin}/jwks` }, idp.rsa],
      [{ x5u: 'https://evil.example.com/cert.pem' }, idp.rsa],
      [{ jwk: attacker.publicJwk }, attacker],
      // RFC 7515 section 4.1.6: a certificate chain in the header. Signed by
      // the issuer's real key, so only the header itself can refuse it.
      [{ x5c: [base64url.encode('not really DER, never parsed')] }, idp.rsa],
    ];
    for (const [header, key] of cases) {
      const error = await refusal(await idp.sign(claims(), { header, key }));
      expect(error.message).toMatch(/its own key/);
      expect(error.message).toContain(Object.keys(header)[0]);
    }
  });

  it('missing sub, or a sub that is not a string', async () => {
    expect((await refusal(await idp.sign(claims({ sub: undefined })))).message).toMatch(/"sub"/);
    await refusal(await idp.sign(claims({ sub: 42 as unknown as string })));
  });

  it('missing exp', async () => {
    expect((await refusal(await idp.sign(claims({ exp: undefined })))).message).toMatch(/"exp"/);
  });

  it('a malformed scope claim', async () => {
    await refusal(await idp.sign(claims({ scope: { admin: true } })));
  });

  it('garbage and truncated tokens', async () => {
    await refusal('a.b.c');
    await refusal('not-a-jwt');
    const token = await idp.sign(claims());
    await refusal(token.slice(0, token.lastIndexOf('.')));
  });
});

describe('verified-token cache', () => {
  it('is bounded: the least recently used token is evicted', async () => {
    const v = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings(idp)],
      logger: silentLogger,
      now: clock.now,
      tokenCacheSize: 2,
    });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((sub) => idp.sign(claims({ sub }))));
    const pa = await v.verify(a!);
    const pb = await v.verify(b!);
    expect(await v.verify(a!)).toBe(pa); // a is now the most recent
    await v.verify(c!); // evicts b
    expect(await v.verify(a!)).toBe(pa);
    const pb2 = await v.verify(b!);
    expect(pb2).not.toBe(pb);
    expect(pb2).toEqual(pb);
    v.close();
  });

  it('answers a repeated token without refetching, and stops at exp', async () => {
    const v = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings(idp)],
      logger: silentLogger,
      now: clock.now,
    });
    const token = await idp.sign(claims({ exp: nowS() + 60 }));
    const first = await v.verify(token);
    const jwksHits = idp.hitCount('/jwks');
    const second = await v.verify(token);
    expect(second).toBe(first);
    expect(idp.hitCount('/jwks')).toBe(jwksHits);
    // Past exp and the 30 s tolerance: verified again, and refused.
    clock.advance(91_000);
    expect((await refusal(token, v)).message).toMatch(/expired/);
    v.close();
  });
});
