import { silentLogger } from '@mcpgw/core';
import type { JWTPayload } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthError } from '../src/auth-error.js';
import { createTokenVerifier, type TokenVerifier } from '../src/token-verifier.js';
import { REFETCH_COOLDOWN_MS, REFRESH_INTERVAL_MS } from '../src/jwks-cache.js';
import type { IssuerSettings } from '../src/issuer-settings.js';
import { capturingLogger } from './capturing-logger.js';
import { fakeClock } from './fake-clock.js';
import { newSigningKey, startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { within } from '@mcpgw/test-helpers/within';

const RESOURCE = 'https://gw.example.com/t/acme/mcp';

let idp: LocalIssuer;
let clock: ReturnType<typeof fakeClock>;
let verifier: TokenVerifier;

function settings(keys: IssuerSettings['keys']): IssuerSettings {
  return {
    issuer: idp.issuer,
    keys,
    algorithms: ['RS256', 'ES256'],
    audiences: [],
    tokenTypes: ['at+jwt'],
    scopeClaim: 'scope',
    clockToleranceSeconds: 0,
  };
}

function makeVerifier(keys: IssuerSettings['keys'] = { jwksUri: idp.jwksUri }): TokenVerifier {
  return createTokenVerifier({ resource: RESOURCE, issuers: [settings(keys)], logger: silentLogger, now: clock.now });
}

/** A verifier whose fetches go to the network as usual, each call's signal kept in `signals`. */
function watchedVerifier(signals: AbortSignal[]): TokenVerifier {
  return createTokenVerifier({
    resource: RESOURCE,
    issuers: [settings({ jwksUri: idp.jwksUri })],
    logger: silentLogger,
    now: clock.now,
    fetch: (input, init) => {
      if (init?.signal) signals.push(init.signal);
      return fetch(input, init);
    },
  });
}

/** A fresh token (distinct jti, so the verified-token cache never answers). */
function claims(): JWTPayload {
  const now = Math.floor(clock.now() / 1000);
  return { iss: idp.issuer, sub: 'alice', aud: RESOURCE, iat: now, exp: now + 3600, jti: crypto.randomUUID() };
}

async function isRefused(promise: Promise<unknown>): Promise<boolean> {
  return promise.then(
    () => false,
    (error: unknown) => error instanceof AuthError,
  );
}

beforeEach(async () => {
  idp = await startLocalIssuer({ path: '/realms/acme' });
  clock = fakeClock();
  verifier = makeVerifier();
});

afterEach(async () => {
  verifier.close();
  await idp.close();
});

describe('JWKS cache', () => {
  it('fetches the JWKS once for many tokens signed by known keys', async () => {
    for (let i = 0; i < 20; i++) await verifier.verify(await idp.sign(claims(), { key: i % 2 ? idp.ec : idp.rsa }));
    expect(idp.hitCount('/jwks')).toBe(1);
  });

  it('concurrent first requests share one fetch', async () => {
    const tokens = await Promise.all(Array.from({ length: 25 }, () => idp.sign(claims())));
    const principals = await Promise.all(tokens.map((t) => verifier.verify(t)));
    expect(principals).toHaveLength(25);
    expect(idp.hitCount('/jwks')).toBe(1);
  });

  it('a flood of unknown kids refetches at most once per 30 s', async () => {
    await verifier.verify(await idp.sign(claims()));
    expect(idp.hitCount('/jwks')).toBe(1);
    // The initial load counts too: let its cooldown pass first.
    clock.advance(REFETCH_COOLDOWN_MS);
    const attackers = await Promise.all(Array.from({ length: 5 }, (_, i) => newSigningKey('ES256', `made-up-${i}`)));
    const flood = await Promise.all(
      Array.from({ length: 100 }, (_, i) => idp.sign(claims(), { key: attackers[i % 5] })),
    );
    // In parallel, then one by one: the IdP sees a single extra request.
    expect(await Promise.all(flood.slice(0, 50).map((t) => isRefused(verifier.verify(t))))).not.toContain(false);
    for (const t of flood.slice(50)) expect(await isRefused(verifier.verify(t))).toBe(true);
    expect(idp.hitCount('/jwks')).toBe(2);
    clock.advance(REFETCH_COOLDOWN_MS - 1);
    expect(await isRefused(verifier.verify(flood[0]!))).toBe(true);
    expect(idp.hitCount('/jwks')).toBe(2);
    clock.advance(1);
    expect(await isRefused(verifier.verify(flood[1]!))).toBe(true);
    expect(idp.hitCount('/jwks')).toBe(3);
  });

  it('a rotated-in key is found by refetching on its unknown kid', async () => {
    await verifier.verify(await idp.sign(claims()));
    clock.advance(REFETCH_COOLDOWN_MS);
    const rotated = await newSigningKey('RS256', 'rsa-2');
    idp.published = [rotated];
    const principal = await verifier.verify(await idp.sign(claims(), { key: rotated }));
    expect(principal.subject).toBe('alice');
    expect(idp.hitCount('/jwks')).toBe(2);
    // The retired key is gone from the refreshed set: its tokens now fail.
    expect(await isRefused(verifier.verify(await idp.sign(claims())))).toBe(true);
  });

  it('stale-if-error: with the JWKS endpoint down, known keys keep verifying past the refresh interval', async () => {
    await verifier.verify(await idp.sign(claims()));
    idp.mode = 'down';
    clock.advance(REFRESH_INTERVAL_MS + 1);
    for (let i = 0; i < 10; i++) await verifier.verify(await idp.sign(claims()));
    // The background refresh was tried (and failed) once: the cooldown holds it.
    await settle(() => idp.hitCount('/jwks') >= 2);
    expect(idp.hitCount('/jwks')).toBe(2);
    clock.advance(24 * 3600_000 - 60_000);
    expect((await verifier.verify(await idp.sign(claims()))).subject).toBe('alice');
  });

  it('with the IdP stopped entirely, known keys keep verifying', async () => {
    await verifier.verify(await idp.sign(claims()));
    const token = await idp.sign(claims());
    await idp.close();
    clock.advance(REFRESH_INTERVAL_MS + 1);
    expect((await verifier.verify(token)).subject).toBe('alice');
    expect((await verifier.verify(await idp.sign(claims(), { key: idp.ec }))).subject).toBe('alice');
    idp = await startLocalIssuer(); // afterEach closes it
  });

  it('a hanging JWKS endpoint never delays a token whose key is known', async () => {
    const signals: AbortSignal[] = [];
    verifier.close();
    verifier = watchedVerifier(signals);
    await verifier.verify(await idp.sign(claims()));
    idp.mode = 'hang';
    clock.advance(REFRESH_INTERVAL_MS + 1);
    const tokens = await Promise.all(Array.from({ length: 5 }, () => idp.sign(claims())));
    for (const t of tokens) await verifier.verify(t);
    // Every token verified while the refresh was still hanging (only its 5 s fetch timeout or
    // close() ends it): nobody waited on the refresh.
    expect(signals).toHaveLength(2);
    expect(signals[1]!.aborted).toBe(false);
    await settle(() => idp.hitCount('/jwks') === 2);
    expect(idp.hitCount('/jwks')).toBe(2); // the refresh is in flight, hanging
  });

  it('a first request with the endpoint down is refused, and retried only after the cooldown', async () => {
    idp.mode = 'down';
    const token = await idp.sign(claims());
    const error = await verifier.verify(token).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).message).toMatch(/signing keys are unavailable/);
    expect(await isRefused(verifier.verify(await idp.sign(claims())))).toBe(true);
    expect(idp.hitCount('/jwks')).toBe(1);
    idp.mode = 'ok';
    clock.advance(REFETCH_COOLDOWN_MS);
    expect((await verifier.verify(token)).subject).toBe('alice');
    expect(idp.hitCount('/jwks')).toBe(2);
  });

  it('tells its observer how each JWKS load went (the gateway counts them in mcpgw_jwks_fetches_total)', async () => {
    const seen: string[] = [];
    verifier.close();
    verifier = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings({ jwksUri: idp.jwksUri })],
      logger: silentLogger,
      now: clock.now,
      observer: { jwksFetched: (outcome) => seen.push(outcome) },
    });
    idp.mode = 'down';
    expect(await isRefused(verifier.verify(await idp.sign(claims())))).toBe(true);
    // Refused again within the cooldown, without a fetch: nothing to count.
    expect(await isRefused(verifier.verify(await idp.sign(claims())))).toBe(true);
    idp.mode = 'ok';
    clock.advance(REFETCH_COOLDOWN_MS);
    await verifier.verify(await idp.sign(claims()));
    expect(seen).toEqual(['error', 'ok']);
  });

  it('gives up on a hanging endpoint after the 5 s fetch timeout', async () => {
    const signals: AbortSignal[] = [];
    verifier.close();
    verifier = watchedVerifier(signals);
    idp.mode = 'hang';
    const started = performance.now();
    expect(await isRefused(verifier.verify(await idp.sign(claims())))).toBe(true);
    // Waited out the timeout (a lower bound: a busy machine only makes it longer), ended by that
    // timeout, then gave up: one fetch, no second one to wait for.
    expect(performance.now() - started).toBeGreaterThan(4_500);
    expect((signals[0]?.reason as Error | undefined)?.name).toBe('TimeoutError');
    expect(idp.hitCount('/jwks')).toBe(1);
  }, 15_000);

  it('a caller that aborts stops waiting on a refetch', async () => {
    idp.mode = 'hang';
    const controller = new AbortController();
    const pending = verifier.verify(await idp.sign(claims()), controller.signal);
    await settle(() => idp.hitCount('/jwks') === 1);
    controller.abort(new Error('client went away'));
    await expect(pending).rejects.toThrow('client went away');
  });

  it('refuses an oversized JWKS answer and keeps working from the known keys', async () => {
    const logger = capturingLogger();
    const v = createTokenVerifier({
      resource: RESOURCE,
      issuers: [settings({ jwksUri: idp.jwksUri })],
      logger,
      now: clock.now,
    });
    await v.verify(await idp.sign(claims()));
    const big = await newSigningKey('RS256', 'big');
    idp.published = [
      idp.rsa,
      ...Array.from({ length: 2_000 }, (_, i) => ({ ...big, publicJwk: { ...big.publicJwk, kid: `k${i}` } })),
    ];
    clock.advance(REFETCH_COOLDOWN_MS);
    expect(await isRefused(v.verify(await idp.sign(claims(), { key: big })))).toBe(true);
    expect(
      logger.records.some((r) => r.msg === 'JWKS refresh failed' && String(r.fields.reason).includes('larger than')),
    ).toBe(true);
    expect((await v.verify(await idp.sign(claims()))).subject).toBe('alice');
    v.close();
  });

  it('close() aborts a pending fetch and starts no new one', async () => {
    const signals: AbortSignal[] = [];
    verifier.close();
    verifier = watchedVerifier(signals);
    idp.mode = 'hang';
    const pending = verifier.verify(await idp.sign(claims()));
    await settle(() => idp.hitCount('/jwks') === 1);
    verifier.close();
    await expect(pending).rejects.toThrow(/signing keys are unavailable/);
    // Aborted by close(), not left to the 5 s fetch timeout.
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    expect((signals[0]!.reason as Error).name).not.toBe('TimeoutError');
    idp.mode = 'ok';
    clock.advance(REFETCH_COOLDOWN_MS);
    await expect(verifier.verify(await idp.sign(claims()))).rejects.toBeInstanceOf(AuthError);
    expect(idp.hitCount('/jwks')).toBe(1);
  });

  it('a token without kid is tried against each key of the right type', async () => {
    const second = await newSigningKey('RS256', 'rsa-2');
    idp.published = [idp.rsa, second, idp.ec];
    for (const key of [idp.rsa, second]) {
      expect((await verifier.verify(await idp.sign(claims(), { key, header: { kid: undefined } }))).subject).toBe(
        'alice',
      );
    }
    const stranger = await newSigningKey('RS256', 'x');
    const refused = await verifier
      .verify(await idp.sign(claims(), { key: stranger, header: { kid: undefined } }))
      .catch((e) => e);
    expect((refused as AuthError).message).toMatch(/signature/);
  });

  it('pinned inline keys never touch the network', async () => {
    const v = makeVerifier({ jwks: { keys: [idp.rsa.publicJwk] } });
    expect((await v.verify(await idp.sign(claims()))).subject).toBe('alice');
    expect(await isRefused(v.verify(await idp.sign(claims(), { key: idp.ec })))).toBe(true);
    expect(idp.hits.size).toBe(0);
    v.close();
  });
});

describe('discovery', () => {
  it('uses the RFC 8414 path-inserted metadata URL first', async () => {
    const v = makeVerifier({ discovery: true });
    expect((await v.verify(await idp.sign(claims()))).subject).toBe('alice');
    expect(idp.hitCount('/.well-known/oauth-authorization-server/realms/acme')).toBe(1);
    expect(idp.hitCount('/realms/acme/.well-known/openid-configuration')).toBe(0);
    expect(idp.hitCount('/jwks')).toBe(1);
    v.close();
  });

  it('falls back to OpenID Connect discovery', async () => {
    const oidc = await startLocalIssuer({ path: '/realms/acme', oidcOnly: true });
    const v = createTokenVerifier({
      resource: RESOURCE,
      issuers: [{ ...settings({ discovery: true }), issuer: oidc.issuer }],
      logger: silentLogger,
      now: clock.now,
    });
    const now = Math.floor(clock.now() / 1000);
    const token = await oidc.sign({ iss: oidc.issuer, sub: 'bob', aud: RESOURCE, exp: now + 60 });
    expect((await v.verify(token)).subject).toBe('bob');
    expect(oidc.hitCount('/realms/acme/.well-known/openid-configuration')).toBe(1);
    v.close();
    await oidc.close();
  });

  it('refuses metadata whose issuer differs from the configured one', async () => {
    const liar = await startLocalIssuer({ metadataIssuer: 'https://evil.example.com' });
    const logger = capturingLogger();
    const v = createTokenVerifier({
      resource: RESOURCE,
      issuers: [{ ...settings({ discovery: true }), issuer: liar.issuer }],
      logger,
      now: clock.now,
    });
    const now = Math.floor(clock.now() / 1000);
    const token = await liar.sign({ iss: liar.issuer, sub: 'bob', aud: RESOURCE, exp: now + 60 });
    expect(await isRefused(v.verify(token))).toBe(true);
    expect(liar.hitCount('/jwks')).toBe(0);
    expect(JSON.stringify(logger.records)).toContain('differs from the configured issuer');
    v.close();
    await liar.close();
  });
});

/**
 * Waits for a condition the issuer's HTTP server reaches asynchronously (a
 * background fetch arriving there); fails the test at the deadline instead
 * of carrying on as if it had been met.
 */
async function settle(condition: () => boolean): Promise<void> {
  await within(10_000, condition, 'the issuer to see the fetch');
}
