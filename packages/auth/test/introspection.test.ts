import { silentLogger } from '@mcpgw/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth-error.js';
import { createTokenVerifier, type TokenVerifier } from '../src/token-verifier.js';
import type { IssuerSettings } from '../src/issuer-settings.js';
import { capturingLogger, type LogRecord } from './capturing-logger.js';
import { fakeClock } from './fake-clock.js';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';

const RESOURCE = 'https://gw.example.com/t/acme/mcp';
const CLIENT = { clientId: 'gateway', clientSecret: 's3cr:et/+ with space' };

let idp: LocalIssuer;
let clock: ReturnType<typeof fakeClock>;
let verifier: TokenVerifier;
const nowS = () => Math.floor(clock.now() / 1000);

function settings(cacheMaxSeconds = 60): IssuerSettings {
  return {
    issuer: idp.issuer,
    algorithms: ['RS256'],
    audiences: ['api://acme'],
    tokenTypes: ['at+jwt'],
    scopeClaim: 'scope',
    groupsClaim: 'roles',
    clockToleranceSeconds: 5,
    introspection: { endpoint: idp.introspectionEndpoint, ...CLIENT, cacheMaxSeconds },
  };
}

function opaque(answer: Record<string, unknown>): string {
  const token = `opaque-${crypto.randomUUID()}`;
  idp.opaqueTokens.set(token, answer);
  return token;
}

function active(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { active: true, iss: idp.issuer, sub: 'carol', aud: RESOURCE, exp: nowS() + 600, scope: 'mcp:read', ...extra };
}

async function refusal(token: string): Promise<AuthError> {
  const error = await verifier.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the token must be refused').toBeInstanceOf(AuthError);
  expect((error as AuthError).code).toBe('invalid_token');
  expect((error as AuthError).message).not.toContain(token);
  return error as AuthError;
}

beforeAll(async () => {
  idp = await startLocalIssuer({ introspectionClient: CLIENT });
});
afterAll(async () => {
  await idp.close();
});
beforeEach(() => {
  idp.mode = 'ok';
  clock = fakeClock();
  verifier?.close();
  verifier = createTokenVerifier({ resource: RESOURCE, issuers: [settings()], logger: silentLogger, now: clock.now });
});

describe('opaque tokens (RFC 7662)', () => {
  it('an active token becomes a Principal; the gateway authenticates with client_secret_basic', async () => {
    const token = opaque(active({ client_id: 'connector', roles: ['ops'] }));
    await expect(verifier.verify(token)).resolves.toEqual({
      issuer: idp.issuer,
      subject: 'carol',
      clientId: 'connector',
      scopes: ['mcp:read'],
      groups: ['ops'],
      expiresAt: nowS() + 600,
    });
    // The local issuer answers 401 to any other credentials, so a Principal proves them right.
    expect(idp.introspectionAuth.at(-1)).toMatch(/^Basic /);
  });

  it('active: false → invalid_token', async () => {
    expect((await refusal(opaque({ active: false }))).message).toMatch(/not active/);
    expect((await refusal('never-issued')).message).toMatch(/not active/);
  });

  it('a returned iss or aud must match, like a JWT', async () => {
    expect((await refusal(opaque(active({ iss: 'https://other.example.com' })))).message).toMatch(/issuer/);
    expect((await refusal(opaque(active({ aud: ['https://gw.example.com/t/globex/mcp'] })))).message).toMatch(
      /not issued for this resource/,
    );
    expect((await verifier.verify(opaque(active({ aud: ['x', 'api://acme'] })))).subject).toBe('carol');
    expect((await verifier.verify(opaque(active({ iss: undefined })))).subject).toBe('carol');
  });

  it('an active answer without aud is refused: it may be any API’s, client’s or tenant’s token (confused deputy)', async () => {
    // MCP authorization "Token Audience Binding", RFC 8707, RFC 9700 section 2.3.
    for (const aud of [undefined, null, [], '']) {
      const error = await refusal(opaque(active({ aud, client_id: 'other-api' })));
      expect(error.message).toMatch(aud === undefined ? /names no audience/ : /not issued for this resource/);
    }
    // A JWT of the introspection-only issuer is held to the same rule.
    const jwt = await idp.sign({ iss: idp.issuer, sub: 'dave', exp: nowS() + 60 });
    idp.opaqueTokens.set(jwt, active({ sub: 'dave', aud: undefined }));
    expect((await refusal(jwt)).message).toMatch(/names no audience/);
  });

  it('an expired or not-yet-valid answer, or one without sub, is refused', async () => {
    expect((await refusal(opaque(active({ exp: nowS() - 10 })))).message).toMatch(/expired/);
    expect((await refusal(opaque(active({ nbf: nowS() + 60 })))).message).toMatch(/not valid yet/);
    expect((await refusal(opaque(active({ sub: undefined })))).message).toMatch(/sub/);
  });

  it('introspection down (503), hanging or unreachable → invalid_token, never cached', async () => {
    const token = opaque(active());
    idp.mode = 'down';
    expect((await refusal(token)).message).toMatch(/did not answer/);
    idp.mode = 'ok';
    expect((await verifier.verify(token)).subject).toBe('carol');

    const unreachable = createTokenVerifier({
      resource: RESOURCE,
      issuers: [
        { ...settings(), introspection: { ...settings().introspection!, endpoint: 'http://127.0.0.1:9/introspect' } },
      ],
      logger: silentLogger,
      now: clock.now,
    });
    await expect(unreachable.verify(token)).rejects.toThrow(/did not answer/);
    unreachable.close();
  });

  it('a hanging endpoint is given up after 5 s', async () => {
    idp.mode = 'hang';
    const started = performance.now();
    expect((await refusal(opaque(active()))).message).toMatch(/did not answer/);
    expect(performance.now() - started).toBeGreaterThan(4_500);
  }, 10_000);

  it('caches an answer until exp, capped by cacheMaxSeconds', async () => {
    const token = opaque(active({ exp: nowS() + 600 }));
    const calls = () => idp.hitCount('/introspect');
    const before = calls();
    await verifier.verify(token);
    await verifier.verify(token);
    expect(calls()).toBe(before + 1);
    // Revoked at the IdP: still answered from cache within the 60 s cap…
    idp.opaqueTokens.set(token, { active: false });
    clock.advance(59_000);
    expect((await verifier.verify(token)).subject).toBe('carol');
    // …and refused once the cap passes.
    clock.advance(1_000);
    await refusal(token);
    expect(calls()).toBe(before + 2);
  });

  it('cacheMaxSeconds 0 asks every time', async () => {
    verifier.close();
    verifier = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings(0)],
      logger: silentLogger,
      now: clock.now,
    });
    const token = opaque(active());
    const before = idp.hitCount('/introspect');
    await verifier.verify(token);
    await verifier.verify(token);
    expect(idp.hitCount('/introspect')).toBe(before + 2);
  });

  it('with no introspection configured an opaque token is refused without any request', async () => {
    const jwtOnly = createTokenVerifier({
      resource: RESOURCE,
      issuers: [{ ...settings(), introspection: undefined, keys: { jwksUri: idp.jwksUri } }],
      logger: silentLogger,
      now: clock.now,
    });
    const before = idp.hits.size;
    await expect(jwtOnly.verify(opaque(active()))).rejects.toThrow(/not a JWT this resource can verify/);
    expect(idp.hits.size).toBe(before);
    jwtOnly.close();
  });

  it('a JWT of an introspection-only issuer is introspected', async () => {
    const jwt = await idp.sign({ iss: idp.issuer, sub: 'dave', aud: RESOURCE, exp: nowS() + 60 });
    idp.opaqueTokens.set(jwt, active({ sub: 'dave' }));
    expect((await verifier.verify(jwt)).subject).toBe('dave');
  });

  it('a JWT of an introspection-only issuer whose typ is not allowed is refused without asking', async () => {
    // RFC 8725 section 3.11: an ID token (typ JWT) introspects as active too.
    for (const typ of ['JWT', null]) {
      const jwt = await idp.sign({ iss: idp.issuer, sub: 'dave', aud: RESOURCE, exp: nowS() + 60 }, { typ });
      idp.opaqueTokens.set(jwt, active({ sub: 'dave' }));
      const before = idp.hitCount('/introspect');
      expect((await refusal(jwt)).message).toMatch(/typ/);
      expect(idp.hitCount('/introspect')).toBe(before);
    }
  });
});

describe('dangerouslyAcceptMissingAudience (per issuer, only with a clientIds allowlist)', () => {
  function lenient(records: LogRecord[] = []): TokenVerifier {
    return createTokenVerifier({
      resource: RESOURCE,
      issuers: [
        {
          ...settings(),
          introspection: {
            ...settings().introspection!,
            dangerouslyAcceptMissingAudience: true,
            clientIds: ['claude-connector'],
          },
        },
      ],
      logger: capturingLogger(records, { tenant: 'acme' }),
      now: clock.now,
    });
  }

  it('accepts an audience-less token only of a listed client', async () => {
    verifier.close();
    verifier = lenient();
    const listed = await verifier.verify(opaque(active({ aud: undefined, client_id: 'claude-connector' })));
    expect(listed).toMatchObject({ subject: 'carol', clientId: 'claude-connector' });
    for (const client_id of ['other-api', undefined, 42]) {
      expect((await refusal(opaque(active({ aud: undefined, client_id })))).message).toMatch(/client/);
    }
    // The allowlist holds for tokens with an audience too, and a wrong audience is still wrong.
    expect((await refusal(opaque(active({ client_id: 'other-api' })))).message).toMatch(/client/);
    const foreign = opaque(active({ aud: 'https://gw.example.com/t/globex/mcp', client_id: 'claude-connector' }));
    expect((await refusal(foreign)).message).toMatch(/not issued for this resource/);
  });

  it('is warned about when the tenant loads, naming the issuer and clients', () => {
    const records: LogRecord[] = [];
    lenient(records).close();
    const warnings = records.filter((r) => r.level === 'warn');
    expect(warnings).toEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({ tenant: 'acme', issuer: idp.issuer, clientIds: ['claude-connector'] }),
        msg: expect.stringMatching(/without an audience/),
      },
    ]);
    expect(JSON.stringify(records)).not.toContain(CLIENT.clientSecret);
  });

  it('is refused at creation without a non-empty clientIds', () => {
    for (const clientIds of [undefined, []]) {
      expect(() =>
        createTokenVerifier({
          resource: RESOURCE,
          issuers: [
            {
              ...settings(),
              introspection: { ...settings().introspection!, dangerouslyAcceptMissingAudience: true, clientIds },
            },
          ],
          logger: silentLogger,
        }),
      ).toThrow(/dangerouslyAcceptMissingAudience needs a non-empty introspection.clientIds/);
    }
  });
});
