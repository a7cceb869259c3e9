import { createEgressGuard } from '@mcpgw/core';
import { authorizationServerSchema, type ClaimMapping } from '@mcpgw/config';
import {
  startEntraLikeProvider,
  type EntraLikeProvider,
  type EntraLikeProviderOptions,
} from '@mcpgw/test-helpers/entra-like-provider';
import { afterEach, describe, expect, it } from 'vitest';
import { mapUpstreamClaims } from '../../src/upstream/claim-mapping.js';
import { DISCOVERY_FRESH_MS } from '../../src/upstream/openid-discovery.js';
import {
  PENDING_SIGN_IN_SECONDS,
  type PendingSignInStore,
  type PendingUpstreamSignIn,
} from '../../src/upstream/pending-sign-in-store.js';
import { KEYS_REFETCH_COOLDOWN_MS } from '../../src/upstream/upstream-keys.js';
import { UpstreamSignInError } from '../../src/upstream/upstream-sign-in-error.js';
import {
  createUpstreamSignIn,
  type OpenIdUpstreamSettings,
  type UpstreamSignInOptions,
} from '../../src/upstream/upstream-sign-in.js';

const CALLBACK = 'http://127.0.0.1:8080/t/acme/oauth/callback';
const CLIENT_ID = '6731de76-14a6-49ae-97bc-6eba6914391e';
const CLIENT_SECRET = 'gateway secret: with spaces & symbols';

/**
 * The pending-sign-in port over a Map, with the test's clock for its TTL: the
 * store engineer's Redis and SQL implementations stand in for it in the
 * gateway; here the sign-in's own behaviour is what is tested.
 */
function memoryPendingStore(clock: { now: number }): PendingSignInStore & { size(): number } {
  const entries = new Map<string, { value: PendingUpstreamSignIn; expiresAt: number }>();
  return {
    put(key, value, ttlSeconds) {
      entries.set(key, {
        value: JSON.parse(JSON.stringify(value)) as PendingUpstreamSignIn,
        expiresAt: clock.now + ttlSeconds * 1000,
      });
      return Promise.resolve();
    },
    take(key) {
      const entry = entries.get(key);
      entries.delete(key);
      return Promise.resolve(entry !== undefined && entry.expiresAt > clock.now ? entry.value : undefined);
    },
    size: () => entries.size,
  };
}

const providers: EntraLikeProvider[] = [];
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close()));
});

async function provider(options: Partial<EntraLikeProviderOptions> = {}): Promise<EntraLikeProvider> {
  const started = await startEntraLikeProvider({
    clients: [{ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [CALLBACK] }],
    user: { name: 'Ada Lovelace', email: 'ada@example.com', groups: ['finance', 'staff'], roles: ['Reader'] },
    ...options,
  });
  providers.push(started);
  return started;
}

function settingsFor(idp: EntraLikeProvider, extra: Partial<OpenIdUpstreamSettings> = {}): OpenIdUpstreamSettings {
  return {
    issuer: idp.issuer,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    scopes: ['openid', 'profile', 'email'],
    ...extra,
  };
}

function signInAt(idp: EntraLikeProvider, options: Partial<UpstreamSignInOptions> = {}) {
  const clock = { now: Date.now() };
  const pending = memoryPendingStore(clock);
  const signIn = createUpstreamSignIn({
    upstream: settingsFor(idp),
    redirectUri: CALLBACK,
    pending,
    now: () => clock.now,
    ...options,
  });
  return { signIn, pending, clock };
}

async function rejection(promise: Promise<unknown>): Promise<UpstreamSignInError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UpstreamSignInError);
  return error as UpstreamSignInError;
}

describe('upstream sign-in against an Entra-like provider', () => {
  it('signs the user in with the code flow, PKCE S256, state and nonce, sending none of the connector’s parameters', async () => {
    const idp = await provider();
    const { signIn, pending } = signInAt(idp);

    const url = new URL(await signIn.start('interaction-1'));
    expect(url.origin + url.pathname).toBe(idp.authorizationEndpoint);
    const query = Object.fromEntries(url.searchParams);
    expect(Object.keys(query).sort()).toEqual(
      [
        'client_id',
        'code_challenge',
        'code_challenge_method',
        'nonce',
        'redirect_uri',
        'response_type',
        'scope',
        'state',
      ].sort(),
    );
    expect(query).toMatchObject({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: CALLBACK,
      scope: 'openid profile email',
      code_challenge_method: 'S256',
    });
    expect(query.state).toMatch(/^[\w-]{43}$/);
    expect(query.nonce).toMatch(/^[\w-]{43}$/);
    expect(pending.size()).toBe(1);

    const callback = await idp.signIn(url.toString());
    expect(callback.origin + callback.pathname).toBe(CALLBACK);
    const identity = await signIn.finish(callback.searchParams, { interactionUid: 'interaction-1' });

    expect(identity.interactionUid).toBe('interaction-1');
    expect(identity.upstreamIssuer).toBe(idp.issuer);
    expect(identity.claims).toMatchObject({
      iss: idp.issuer,
      aud: CLIENT_ID,
      tid: idp.tenantId,
      name: 'Ada Lovelace',
      groups: ['finance', 'staff'],
      roles: ['Reader'],
    });
    expect(identity.claims.oid).toMatch(/^[0-9a-f-]{36}$/);
    expect(idp.refusals).toEqual([]);
    // The token request: the gateway's own client, client_secret_basic, the verifier, no resource.
    const [tokenRequest] = idp.tokenRequests;
    expect(tokenRequest!.authorization).toMatch(/^Basic /);
    expect(tokenRequest!.params.has('client_secret')).toBe(false);
    expect(tokenRequest!.params.has('resource')).toBe(false);
    expect(tokenRequest!.params.get('code_verifier')).toMatch(/^[\w-]{43}$/);
    // Entra-like: OpenID discovery only (no RFC 8414 document was asked for), once.
    expect(idp.hits(`/${idp.tenantId}/v2.0/.well-known/openid-configuration`)).toBe(1);
    expect(pending.size()).toBe(0);
  });

  it('meets a provider that refuses the resource parameter, which the sign-in never sends', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp);
    const url = new URL(await signIn.start('interaction-1'));
    // What a forwarded connector request would have met: the AADSTS9010010 refusal.
    url.searchParams.set('resource', 'http://127.0.0.1:8080/t/acme/mcp');
    const refused = await idp.signIn(url.toString());
    expect(refused.searchParams.get('error')).toBe('invalid_target');
    expect(idp.refusals[0]?.description).toMatch(/^AADSTS9010010/);

    const error = await rejection(signIn.finish(refused.searchParams));
    expect(error.code).toBe('upstream_refused');
    expect(error.message).toBe('The identity provider refused the sign-in (invalid_target).');
    expect(error.detail).toContain('AADSTS9010010');
    expect(idp.tokenRequests).toHaveLength(0);
  });

  it('signs in as a public client with PKCE alone when no secret is set', async () => {
    const idp = await provider({ clients: [{ clientId: CLIENT_ID, redirectUris: [CALLBACK] }] });
    const { signIn } = signInAt(idp, { upstream: settingsFor(idp, { clientSecret: undefined }) });
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    await signIn.finish(callback.searchParams);
    expect(idp.tokenRequests[0]!.authorization).toBeUndefined();
    expect(idp.tokenRequests[0]!.params.get('client_id')).toBe(CLIENT_ID);
  });

  it('reports a wrong client secret as the provider refusing the sign-in', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp, { upstream: settingsFor(idp, { clientSecret: 'not the secret' }) });
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    const error = await rejection(signIn.finish(callback.searchParams));
    expect(error.code).toBe('upstream_refused');
    expect(error.message).toContain('invalid_client');
    expect(error.message).not.toContain('not the secret');
  });

  it('reports the user cancelling at the provider', async () => {
    const idp = await provider({ interactive: true });
    const { signIn } = signInAt(idp);
    const callback = await idp.signIn(await signIn.start('interaction-1'), { cancel: true });
    const error = await rejection(signIn.finish(callback.searchParams));
    expect(error.code).toBe('upstream_refused');
    expect(error.message).toContain('access_denied');
  });
});

describe('the callback’s state', () => {
  it('refuses a state it never issued, without calling the provider', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp);
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    callback.searchParams.set('state', 'a-state-someone-made-up');
    const error = await rejection(signIn.finish(callback.searchParams));
    expect(error.code).toBe('sign_in_expired');
    expect(error.message).toBe('This sign-in has expired or was already used. Start again.');
    expect(idp.tokenRequests).toHaveLength(0);
  });

  it('is single use: a replayed callback is refused', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp);
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    await signIn.finish(callback.searchParams);
    expect((await rejection(signIn.finish(callback.searchParams))).code).toBe('sign_in_expired');
    expect(idp.tokenRequests).toHaveLength(1);
  });

  it('expires after the pending sign-in’s lifetime', async () => {
    const idp = await provider();
    const { signIn, clock } = signInAt(idp);
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    clock.now += PENDING_SIGN_IN_SECONDS * 1000 + 1;
    expect((await rejection(signIn.finish(callback.searchParams))).code).toBe('sign_in_expired');
  });

  it('belongs to the interaction it was started for', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp);
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    const error = await rejection(signIn.finish(callback.searchParams, { interactionUid: 'interaction-2' }));
    expect(error.code).toBe('sign_in_expired');
    expect(idp.tokenRequests).toHaveLength(0);
  });

  it('cannot be finished at another tenant’s callback sharing the store', async () => {
    const idp = await provider();
    const clock = { now: Date.now() };
    const pending = memoryPendingStore(clock);
    const acme = createUpstreamSignIn({ upstream: settingsFor(idp), redirectUri: CALLBACK, pending });
    const other = createUpstreamSignIn({
      upstream: settingsFor(idp),
      redirectUri: 'http://127.0.0.1:8080/t/other/oauth/callback',
      pending,
    });
    const callback = await idp.signIn(await acme.start('interaction-1'));
    expect((await rejection(other.finish(callback.searchParams))).code).toBe('sign_in_expired');
  });
});

describe('the ID token', () => {
  const cases: [string, (idp: EntraLikeProvider) => void, RegExp][] = [
    ['another sign-in’s nonce', (idp) => (idp.tamper.idTokenClaims = { nonce: 'another-nonce' }), /nonce/],
    ['no nonce', (idp) => (idp.tamper.idTokenClaims = { nonce: undefined }), /nonce/],
    [
      'an expired one',
      (idp) => {
        const now = Math.floor(Date.now() / 1000);
        idp.tamper.idTokenClaims = { iat: now - 7200, nbf: now - 7200, exp: now - 3600 };
      },
      /ERR_JWT_EXPIRED/,
    ],
    ['a forged signature', (idp) => (idp.tamper.forgeSignature = true), /ERR_JWS_SIGNATURE_VERIFICATION_FAILED/],
    ['another client’s audience', (idp) => (idp.tamper.idTokenClaims = { aud: 'another-client' }), /aud/],
    [
      'several audiences without azp',
      (idp) => (idp.tamper.idTokenClaims = { aud: [CLIENT_ID, 'another-client'] }),
      /azp/,
    ],
    ['another issuer', (idp) => (idp.tamper.idTokenClaims = { iss: 'https://login.example.com/' }), /iss/],
    ['no subject', (idp) => (idp.tamper.idTokenClaims = { sub: undefined }), /sub/],
  ];
  for (const [what, tamper, detail] of cases) {
    it(`refuses ${what}`, async () => {
      const idp = await provider();
      const { signIn } = signInAt(idp);
      const callback = await idp.signIn(await signIn.start('interaction-1'));
      tamper(idp);
      const error = await rejection(signIn.finish(callback.searchParams));
      expect(error.code).toBe('id_token_invalid');
      expect(error.message).toBe('The identity provider’s answer could not be verified, so the sign-in was stopped.');
      expect(error.detail).toMatch(detail);
    });
  }

  it('refuses a token response without an ID token', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp);
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    idp.tamper.omitIdToken = true;
    const error = await rejection(signIn.finish(callback.searchParams));
    expect(error.code).toBe('upstream_misconfigured');
    expect(error.message).toContain('openid');
  });
});

describe('the provider’s keys', () => {
  it('are read once, and again when the provider signs with a new key', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp);
    const jwks = `/${idp.tenantId}/discovery/v2.0/keys`;
    for (const uid of ['interaction-1', 'interaction-2']) {
      await signIn.finish((await idp.signIn(await signIn.start(uid))).searchParams);
    }
    expect(idp.hits(jwks)).toBe(1);
    await idp.rotateKeys();
    await signIn.finish((await idp.signIn(await signIn.start('interaction-3'))).searchParams);
    expect(idp.hits(jwks)).toBe(2);
  });

  it('are read again at most once per cooldown for ID tokens with unknown keys', async () => {
    const idp = await provider();
    const { signIn, clock } = signInAt(idp);
    const jwks = `/${idp.tenantId}/discovery/v2.0/keys`;
    await signIn.finish((await idp.signIn(await signIn.start('interaction-1'))).searchParams);
    await idp.rotateKeys();
    await signIn.finish((await idp.signIn(await signIn.start('interaction-2'))).searchParams);
    await idp.rotateKeys();
    // Within the cooldown the new key is not looked for: the sign-in fails rather than hammer the provider.
    const error = await rejection(signIn.finish((await idp.signIn(await signIn.start('interaction-3'))).searchParams));
    expect(error.code).toBe('id_token_invalid');
    expect(idp.hits(jwks)).toBe(2);
    clock.now += KEYS_REFETCH_COOLDOWN_MS + 1;
    await signIn.finish((await idp.signIn(await signIn.start('interaction-4'))).searchParams);
    expect(idp.hits(jwks)).toBe(3);
  });
});

describe('an upstream that is down or unreachable', () => {
  it('fails the start when the provider answers 503', async () => {
    const idp = await provider();
    idp.down = true;
    const { signIn, pending } = signInAt(idp);
    const error = await rejection(signIn.start('interaction-1'));
    expect(error.code).toBe('upstream_unreachable');
    expect(error.message).toBe('The identity provider could not be reached. Try again later.');
    expect(pending.size()).toBe(0);
  });

  it('fails the start when nothing listens, and fails fast until the retry delay passed', async () => {
    const idp = await provider();
    const { signIn, clock } = signInAt(idp);
    await idp.close();
    providers.splice(providers.indexOf(idp), 1);
    const first = await rejection(signIn.start('interaction-1'));
    expect(first.code).toBe('upstream_unreachable');
    expect(first.detail).toContain('request failed');
    // The same failure, not a second connection attempt.
    expect(await rejection(signIn.start('interaction-2'))).toBe(first);
    clock.now += 5_001;
    expect(await rejection(signIn.start('interaction-3'))).not.toBe(first);
  });

  it('fails the finish when the token endpoint goes down after the redirect', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp);
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    idp.down = true;
    expect((await rejection(signIn.finish(callback.searchParams))).code).toBe('upstream_unreachable');
  });

  it('keeps serving the last good discovery document while the provider is down', async () => {
    const idp = await provider();
    const { signIn, clock } = signInAt(idp);
    await signIn.start('interaction-1');
    clock.now += DISCOVERY_FRESH_MS + 1;
    idp.down = true;
    await expect(signIn.start('interaction-2')).resolves.toContain(idp.authorizationEndpoint);
  });

  it('reads the discovery document again once it is older than its lifetime', async () => {
    const idp = await provider();
    const { signIn, clock } = signInAt(idp);
    const discovery = `/${idp.tenantId}/v2.0/.well-known/openid-configuration`;
    await Promise.all([signIn.start('interaction-1'), signIn.start('interaction-2')]);
    expect(idp.hits(discovery)).toBe(1);
    clock.now += DISCOVERY_FRESH_MS + 1;
    await signIn.start('interaction-3');
    expect(idp.hits(discovery)).toBe(2);
  });
});

describe('where the endpoints come from', () => {
  it('refuses a discovery document naming another issuer', async () => {
    const idp = await provider();
    const { signIn } = signInAt(idp, { upstream: settingsFor(idp, { issuer: `${idp.issuer}/` }) });
    const error = await rejection(signIn.start('interaction-1'));
    expect(error.code).toBe('upstream_misconfigured');
    expect(error.detail).toContain('"issuer"');
  });

  it('uses configured endpoints without any discovery', async () => {
    const idp = await provider();
    const endpoints = { authorization: idp.authorizationEndpoint, token: idp.tokenEndpoint, jwks: idp.jwksUri };
    const { signIn } = signInAt(idp, { upstream: settingsFor(idp, { endpoints }) });
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    await expect(signIn.finish(callback.searchParams)).resolves.toMatchObject({ claims: { tid: idp.tenantId } });
    expect(idp.hits(`/${idp.tenantId}/v2.0/.well-known/openid-configuration`)).toBe(0);
  });

  it('refuses a loopback provider under the egress policy, and reaches it where an operator allowed it', async () => {
    const idp = await provider();
    const refused = signInAt(idp, { egress: createEgressGuard() });
    const error = await rejection(refused.signIn.start('interaction-1'));
    expect(error.code).toBe('upstream_unreachable');
    expect(error.detail).toContain('refused by the egress policy');
    expect(idp.hits(`/${idp.tenantId}/v2.0/.well-known/openid-configuration`)).toBe(0);

    const allowed = signInAt(idp, { egress: createEgressGuard({ allow: ['127.0.0.1'] }) });
    const callback = await idp.signIn(await allowed.signIn.start('interaction-1'));
    await expect(allowed.signIn.finish(callback.searchParams)).resolves.toMatchObject({
      interactionUid: 'interaction-1',
    });
  });
});

describe('a Keycloak-like provider', () => {
  const mapping = (claims: Record<string, unknown>): ClaimMapping =>
    authorizationServerSchema.shape.claims.parse(claims);

  it('checks RFC 9207 iss, and maps nested realm roles into groups', async () => {
    const idp = await provider({
      flavour: 'keycloak',
      user: { name: 'Kay', email: 'kay@example.com', roles: ['admin', 'auditor'] },
    });
    const claims = mapping({
      groups: 'realm_access.roles',
      extra: { client_roles: `resource_access.${CLIENT_ID}.roles` },
    });
    const { signIn } = signInAt(idp, { claims });
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    expect(callback.searchParams.get('iss')).toBe(idp.issuer);
    const identity = await signIn.finish(callback.searchParams);
    const account = mapUpstreamClaims(claims, identity);
    expect(account).toMatchObject({
      accountId: identity.claims.sub,
      upstreamIssuer: idp.issuer,
      claims: { email: 'kay@example.com', name: 'Kay', groups: ['admin', 'auditor'], client_roles: ['client-user'] },
      dropped: [],
    });
  });

  it('refuses an authorization response from another issuer (mix-up)', async () => {
    const idp = await provider({ flavour: 'keycloak' });
    const { signIn } = signInAt(idp);
    const callback = await idp.signIn(await signIn.start('interaction-1'));
    callback.searchParams.set('iss', 'https://attacker.example/realms/test');
    const error = await rejection(signIn.finish(callback.searchParams));
    expect(error.code).toBe('id_token_invalid');
    expect(idp.tokenRequests).toHaveLength(0);
  });

  it('reads userinfo for a mapped claim the ID token lacks', async () => {
    const idp = await provider({
      flavour: 'keycloak',
      user: { name: 'Kay', userinfoClaims: { department: 'Research', name: 'Not the ID token’s' } },
    });
    const claims = mapping({ extra: { department: 'department' } });
    const { signIn } = signInAt(idp, { claims });
    const identity = await signIn.finish((await idp.signIn(await signIn.start('interaction-1'))).searchParams);
    // The signed ID token wins where both have a claim.
    expect(identity.claims).toMatchObject({ department: 'Research', name: 'Kay' });
    expect(idp.hits('/realms/test/protocol/openid-connect/userinfo')).toBe(1);
  });

  it('does not read userinfo when the ID token has every mapped claim', async () => {
    const idp = await provider({ flavour: 'keycloak', user: { name: 'Kay', email: 'kay@example.com', groups: ['a'] } });
    const { signIn } = signInAt(idp, { claims: mapping({}) });
    await signIn.finish((await idp.signIn(await signIn.start('interaction-1'))).searchParams);
    expect(idp.hits('/realms/test/protocol/openid-connect/userinfo')).toBe(0);
  });
});

describe('odd claim values from a real sign-in', () => {
  it('bounds a huge groups claim and drops values that are not names', async () => {
    const huge = Array.from({ length: 5000 }, (_, index) => `group-${index}`);
    const idp = await provider({
      user: { groups: [...huge, 42, { admin: true }, null, 'x'.repeat(10_000)], claims: { name: ['not', 'text'] } },
    });
    const claims = authorizationServerSchema.shape.claims.parse({});
    const { signIn } = signInAt(idp, { claims });
    const identity = await signIn.finish((await idp.signIn(await signIn.start('interaction-1'))).searchParams);
    const account = mapUpstreamClaims(claims, identity);
    expect(account.claims.groups).toHaveLength(200);
    expect(account.claims.groups?.[0]).toBe('group-0');
    expect(account.claims).not.toHaveProperty('name');
    expect(account.dropped.join('\n')).toMatch(/4800 past the first 200/);
    expect(account.dropped.join('\n')).toMatch(/4 entries that are not names/);
  });
});
