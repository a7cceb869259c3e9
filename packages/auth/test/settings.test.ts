import { silentLogger } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../src/token-verifier.js';
import { discoveryUrls } from '../src/discovery.js';
import type { IssuerSettings } from '../src/issuer-settings.js';

const base: IssuerSettings = {
  issuer: 'https://idp.example.com',
  keys: { jwksUri: 'https://idp.example.com/jwks' },
  algorithms: ['RS256'],
  audiences: [],
  tokenTypes: ['at+jwt'],
  scopeClaim: 'scope',
  clockToleranceSeconds: 30,
};

function create(...issuers: IssuerSettings[]) {
  return () =>
    createTokenVerifier({ resource: 'https://gw.example.com/t/a/mcp', issuers, logger: silentLogger }).close();
}

describe('settings are refused at creation, not on the first request', () => {
  it('symmetric and none algorithms, defensively', () => {
    for (const alg of ['HS256', 'HS512', 'none', 'rs256']) {
      expect(create({ ...base, algorithms: ['RS256', alg] })).toThrow(/not an allowed asymmetric/);
    }
  });

  it('a clock tolerance above 60 s, an empty typ list, a duplicate issuer', () => {
    expect(create({ ...base, clockToleranceSeconds: 61 })).toThrow(/clockToleranceSeconds/);
    expect(create({ ...base, tokenTypes: [] })).toThrow(/tokenTypes/);
    expect(create(base, base)).toThrow(/configured twice/);
  });

  it('private or symmetric inline keys', () => {
    const privateJwk = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'secret' };
    expect(create({ ...base, keys: { jwks: { keys: [privateJwk] } } })).toThrow(/public keys only/);
    expect(create({ ...base, keys: { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } } })).toThrow(/public keys only/);
  });

  it('two introspecting issuers (an opaque token names no issuer)', () => {
    const introspection = { endpoint: 'https://idp/introspect', clientId: 'c', clientSecret: 's', cacheMaxSeconds: 0 };
    expect(create({ ...base, introspection }, { ...base, issuer: 'https://other.example.com', introspection })).toThrow(
      /at most one issuer/,
    );
  });

  it('an issuer with neither keys nor introspection', () => {
    expect(create({ ...base, keys: undefined })).toThrow(/give keys/);
  });
});

describe('discoveryUrls', () => {
  it('inserts the well-known segment before the issuer path (RFC 8414 section 3.1), appends for OIDC', () => {
    expect(discoveryUrls('https://idp.example.com/realms/acme/')).toEqual([
      'https://idp.example.com/.well-known/oauth-authorization-server/realms/acme',
      'https://idp.example.com/realms/acme/.well-known/openid-configuration',
    ]);
    expect(discoveryUrls('https://idp.example.com')).toEqual([
      'https://idp.example.com/.well-known/oauth-authorization-server',
      'https://idp.example.com/.well-known/openid-configuration',
    ]);
  });
});
