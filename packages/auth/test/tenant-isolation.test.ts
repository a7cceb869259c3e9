import { silentLogger } from '@mcpgw/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth-error.js';
import { createTokenVerifier, type TokenVerifier } from '../src/token-verifier.js';
import type { IssuerSettings } from '../src/issuer-settings.js';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';

const ACME = 'https://gw.example.com/t/acme/mcp';
const GLOBEX = 'https://gw.example.com/t/globex/mcp';

let acmeIdp: LocalIssuer;
let globexIdp: LocalIssuer;
let acme: TokenVerifier;
let globex: TokenVerifier;

function issuer(idp: LocalIssuer): IssuerSettings {
  return {
    issuer: idp.issuer,
    keys: { discovery: true },
    algorithms: ['RS256', 'ES256'],
    audiences: [],
    tokenTypes: ['at+jwt'],
    scopeClaim: 'scope',
    clockToleranceSeconds: 30,
  };
}

async function token(idp: LocalIssuer, aud: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return idp.sign({ iss: idp.issuer, sub: 'alice', aud, iat: now, exp: now + 300 });
}

beforeAll(async () => {
  acmeIdp = await startLocalIssuer({ path: '/acme' });
  globexIdp = await startLocalIssuer({ path: '/globex' });
  acme = createTokenVerifier({ resource: ACME, issuers: [issuer(acmeIdp)], logger: silentLogger });
  globex = createTokenVerifier({ resource: GLOBEX, issuers: [issuer(globexIdp)], logger: silentLogger });
});

afterAll(async () => {
  acme.close();
  globex.close();
  await acmeIdp.close();
  await globexIdp.close();
});

describe('two tenants with two issuers', () => {
  it("each accepts its own tokens and refuses the other's", async () => {
    const forAcme = await token(acmeIdp, ACME);
    const forGlobex = await token(globexIdp, GLOBEX);
    expect((await acme.verify(forAcme)).issuer).toBe(acmeIdp.issuer);
    expect((await globex.verify(forGlobex)).issuer).toBe(globexIdp.issuer);
    // Verified (and cached) on one tenant, still refused on the other.
    await expect(globex.verify(forAcme)).rejects.toBeInstanceOf(AuthError);
    await expect(acme.verify(forGlobex)).rejects.toBeInstanceOf(AuthError);
    // Even a token naming the other tenant's resource in aud fails on issuer.
    await expect(globex.verify(await token(acmeIdp, GLOBEX))).rejects.toThrow(/issuer this resource trusts/);
  });

  it('one IdP shared by two tenants: the audience keeps them apart', async () => {
    const shared = createTokenVerifier({ resource: GLOBEX, issuers: [issuer(acmeIdp)], logger: silentLogger });
    await expect(shared.verify(await token(acmeIdp, ACME))).rejects.toThrow(/not issued for this resource/);
    expect((await shared.verify(await token(acmeIdp, GLOBEX))).subject).toBe('alice');
    shared.close();
  });

  it('never fetches keys from the other tenant’s IdP', async () => {
    const total = () => [...globexIdp.hits.values()].reduce((a, b) => a + b, 0);
    const before = total();
    await expect(acme.verify(await token(globexIdp, ACME))).rejects.toBeInstanceOf(AuthError);
    expect(total()).toBe(before);
  });
});
