import { createEgressGuard, type EgressGuard } from '@mcpgw/core';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth-error.js';
import type { IssuerSettings } from '../src/issuer-settings.js';
import { createTokenVerifier, type TokenVerifier } from '../src/token-verifier.js';
import { capturingLogger } from './capturing-logger.js';

// An issuer a tenant admin configured fetches its keys, metadata and
// introspection answers through the egress guard (docs/configuration.md,
// "Egress policy"); a refused fetch is an unreachable issuer: 401.

const RESOURCE = 'https://gw.example.com/t/acme/mcp';
const CLIENT = { clientId: 'gateway', clientSecret: 'secret' };

let idp: LocalIssuer;
const verifiers: TokenVerifier[] = [];

beforeAll(async () => {
  idp = await startLocalIssuer({ introspectionClient: CLIENT });
});
afterEach(() => {
  verifiers.splice(0).forEach((verifier) => verifier.close());
});
afterAll(async () => {
  await idp.close();
});

const base = (): IssuerSettings => ({
  issuer: idp.issuer,
  algorithms: ['ES256', 'RS256'],
  audiences: [],
  tokenTypes: ['at+jwt'],
  scopeClaim: 'scope',
  clockToleranceSeconds: 5,
});

function verifierFor(settings: IssuerSettings, logger = capturingLogger()): TokenVerifier {
  const verifier = createTokenVerifier({ resource: RESOURCE, issuers: [settings], logger });
  verifiers.push(verifier);
  return verifier;
}

async function refusal(verifier: TokenVerifier, token: string): Promise<AuthError> {
  const error = await verifier.verify(token).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AuthError);
  expect((error as AuthError).code).toBe('invalid_token');
  return error as AuthError;
}

const hits = () => [...idp.hits.values()].reduce((sum, count) => sum + count, 0);

describe('issuer fetches under the egress guard', () => {
  it.each([
    ['a JWKS URI', (): IssuerSettings['keys'] => ({ jwksUri: idp.jwksUri })],
    ['discovery', (): IssuerSettings['keys'] => ({ discovery: true })],
  ])('refuses %s on loopback: the keys are unavailable (401), nothing reaches the issuer', async (_name, keys) => {
    const logger = capturingLogger();
    const before = hits();
    const verifier = verifierFor({ ...base(), keys: keys(), egress: createEgressGuard() }, logger);
    const error = await refusal(verifier, await idp.token({ aud: RESOURCE }));
    expect(error.message).toBe("The issuer's signing keys are unavailable right now; try again later");
    expect(hits()).toBe(before);
    const warning = logger.records.find((record) => record.msg === 'JWKS refresh failed');
    expect(String(warning?.fields.reason)).toContain('refused by the egress policy');
    expect(String(warning?.fields.reason)).toContain('EGRESS_ALLOW');
  });

  it('refuses a loopback introspection endpoint: the token cannot be verified (401)', async () => {
    const before = hits();
    const token = `opaque-${crypto.randomUUID()}`;
    idp.opaqueTokens.set(token, { active: true, iss: idp.issuer, aud: RESOURCE, exp: Date.now() / 1000 + 600 });
    const verifier = verifierFor({
      ...base(),
      introspection: { endpoint: idp.introspectionEndpoint, ...CLIENT, cacheMaxSeconds: 0 },
      egress: createEgressGuard(),
    });
    const error = await refusal(verifier, token);
    expect(error.message).toContain('did not answer');
    expect(hits()).toBe(before);
  });

  it('a name resolving to loopback is refused like the address', async () => {
    const before = hits();
    const port = new URL(idp.origin).port;
    const verifier = verifierFor({
      ...base(),
      keys: { jwksUri: `http://localhost:${port}/jwks` },
      egress: createEgressGuard(),
    });
    await refusal(verifier, await idp.token({ aud: RESOURCE }));
    expect(hits()).toBe(before);
  });

  it.each([
    ['the operator allowlist names the address', createEgressGuard({ allow: ['127.0.0.1'] })],
    ['no guard (an issuer operators configured)', undefined],
  ])('verifies when %s', async (_name, egress: EgressGuard | undefined) => {
    const verifier = verifierFor({ ...base(), keys: { jwksUri: idp.jwksUri }, ...(egress ? { egress } : {}) });
    const principal = await verifier.verify(await idp.token({ aud: RESOURCE }));
    expect(principal.subject).toBe('alice');
  });
});
