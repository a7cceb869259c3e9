import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth-error.js';
import { createTokenVerifier } from '../src/token-verifier.js';
import type { IssuerSettings } from '../src/issuer-settings.js';
import { capturingLogger } from './capturing-logger.js';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';

// A token refused because the configuration and the identity provider disagree is logged at
// the operator's level (info) with what it carried and the setting that would accept it, so
// "OPERATOR_ISSUER was typed wrong" or "Keycloak sends typ JWT" is found in the log, not guessed.
// The response keeps its public message only; the token itself is never logged.

const RESOURCE = 'https://gw.example.com/t/acme/mcp';
let idp: LocalIssuer;
beforeAll(async () => {
  idp = await startLocalIssuer({ path: '/realms/acme' });
});
afterAll(() => idp.close());

async function refusal(token: string, settings: Partial<IssuerSettings> = {}) {
  const logger = capturingLogger();
  const verifier = createTokenVerifier({
    resource: RESOURCE,
    logger,
    issuers: [
      {
        issuer: idp.issuer,
        keys: { jwksUri: idp.jwksUri },
        algorithms: ['ES256'],
        audiences: [],
        tokenTypes: ['at+jwt'],
        scopeClaim: 'scope',
        clockToleranceSeconds: 0,
        ...settings,
      },
    ],
  });
  try {
    const error = await verifier.verify(token).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    const record = logger.records.find((r) => r.msg === 'access token refused');
    expect(JSON.stringify(logger.records)).not.toContain(token);
    return { message: (error as AuthError).message, record };
  } finally {
    verifier.close();
  }
}

describe('a refused token, in the operator log', () => {
  it('names an unknown iss and the issuers trusted now', async () => {
    const { message, record } = await refusal(
      await idp.token({ aud: RESOURCE, iss: 'https://sso.example.com/realms/acme' }),
    );
    expect(message).not.toContain('sso.example.com');
    expect(record).toMatchObject({
      level: 'info',
      fields: { received: { iss: 'https://sso.example.com/realms/acme' } },
    });
    expect(record?.fields.setting).toContain(idp.issuer);
    expect(record?.fields.setting).toContain('auth.issuers[].issuer');
  });

  it('names a typ the issuer is not configured for, and tokenTypes', async () => {
    const { record } = await refusal(await idp.token({ aud: RESOURCE }, { typ: 'JWT' }));
    expect(record).toMatchObject({ level: 'info', fields: { received: { typ: 'JWT' } } });
    expect(record?.fields.setting).toMatch(/tokenTypes \(now at\+jwt/);
  });

  it('names the audiences received and the ones that would be accepted', async () => {
    const { message, record } = await refusal(await idp.token({ aud: ['account', 'api://other'] }));
    expect(message).toBe('The token was not issued for this resource');
    expect(record).toMatchObject({ level: 'info', fields: { received: { aud: ['account', 'api://other'] } } });
    expect(record?.fields.setting).toContain(RESOURCE);
    expect(record?.fields.setting).toContain('audiences');
  });

  it('names a signing algorithm outside algorithms', async () => {
    const token = await idp.sign({ iss: idp.issuer, sub: 'a', aud: RESOURCE, exp: Math.floor(Date.now() / 1000) + 60 });
    const { record } = await refusal(token); // signed RS256; only ES256 is allowed here
    expect(record).toMatchObject({ level: 'info', fields: { received: { alg: 'RS256' } } });
    expect(record?.fields.setting).toContain('algorithms (now ES256');
  });

  it('keeps forged and expired tokens at debug, without a hint', async () => {
    const expired = await idp.token({ aud: RESOURCE, exp: Math.floor(Date.now() / 1000) - 60 });
    const { record } = await refusal(expired);
    expect(record).toMatchObject({ level: 'debug' });
    expect(record?.fields.received).toBeUndefined();
  });
});
