import { base64url } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth-error.js';
import { createTokenVerifier } from '../src/token-verifier.js';
import type { IssuerSettings } from '../src/issuer-settings.js';
import { capturingLogger } from './capturing-logger.js';
import { fakeClock } from './fake-clock.js';
import { newSigningKey, startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';

const RESOURCE = 'https://gw.example.com/t/acme/mcp';
const CLIENT = { clientId: 'gateway', clientSecret: 'introspection-secret-value' };

let idp: LocalIssuer;
beforeAll(async () => {
  idp = await startLocalIssuer({ introspectionClient: CLIENT });
});
afterAll(async () => {
  await idp.close();
});

describe('the raw token never reaches the logs', () => {
  it('across successes, every failure path, JWKS outages and introspection outages', async () => {
    const logger = capturingLogger();
    const clock = fakeClock();
    const settings: IssuerSettings = {
      issuer: idp.issuer,
      keys: { jwksUri: idp.jwksUri },
      algorithms: ['RS256', 'ES256'],
      audiences: [],
      tokenTypes: ['at+jwt'],
      scopeClaim: 'scope',
      clockToleranceSeconds: 0,
      introspection: { endpoint: idp.introspectionEndpoint, ...CLIENT, cacheMaxSeconds: 60 },
    };
    const verifier = createTokenVerifier({ resource: RESOURCE, issuers: [settings], logger, now: clock.now });
    const now = Math.floor(clock.now() / 1000);
    const good = { iss: idp.issuer, sub: 'alice', aud: RESOURCE, exp: now + 300 };
    const stranger = await newSigningKey('RS256', 'stranger');
    const tokens: string[] = [
      await idp.sign(good),
      await idp.sign({ ...good, exp: now - 10 }),
      await idp.sign({ ...good, aud: 'elsewhere' }),
      await idp.sign({ ...good, iss: 'https://evil.example.com' }),
      await idp.sign(good, { key: stranger }),
      await idp.sign(good, { header: { jku: 'https://evil.example.com/jwks' } }),
      await idp.sign(good, { typ: 'JWT' }),
      `${base64url.encode('{"alg":"none"}')}.${base64url.encode(JSON.stringify(good))}.`,
      'opaque-active-token-value',
      'opaque-inactive-token-value',
    ];
    idp.opaqueTokens.set('opaque-active-token-value', { active: true, sub: 'bob', exp: now + 60 });
    for (const token of tokens) await verifier.verify(token).catch((e: unknown) => e);
    // Outages: the JWKS endpoint and the introspection endpoint down.
    idp.mode = 'down';
    clock.advance(31_000);
    const during = [await idp.sign(good, { key: await newSigningKey('ES256', 'new') }), 'opaque-during-outage'];
    for (const token of during) expect(await verifier.verify(token).catch((e: unknown) => e)).toBeInstanceOf(AuthError);
    verifier.close();

    expect(logger.records.length).toBeGreaterThan(tokens.length); // the paths did log
    expect(logger.records.some((r) => r.msg === 'JWKS refresh failed')).toBe(true);
    expect(logger.records.some((r) => r.msg === 'token introspection failed')).toBe(true);
    const logged = JSON.stringify(logger.records);
    for (const token of [...tokens, ...during]) {
      expect(logged).not.toContain(token);
      // Not even the signature or the payload segment of a JWT.
      for (const part of token.split('.').slice(1)) if (part.length > 8) expect(logged).not.toContain(part);
    }
    expect(logged).not.toContain(CLIENT.clientSecret);
  });
});
