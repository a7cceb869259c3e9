/**
 * The admin API's guards that run before anything else (docs/admin-api.md,
 * "Limits"): authentication before the body is read, rate limits per client
 * address and per admin (429 problem with Retry-After), load shedding (503
 * problem), and where the client address comes from: the connection, or
 * X-Forwarded-For only from a proxy TRUSTED_PROXIES names
 * (docs/operations.md). Through the public API: app.inject with a client
 * address, and a real port for a body that never arrives.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { BODY_LIMIT_BYTES } from '../src/app.js';
import type { AdminProblemType } from '@mcpgw/admin';
import { adminProblemRegistry } from '@mcpgw/admin';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import type { LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import type { TestDatabase } from '@mcpgw/test-helpers/postgres';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';

const BASE = 'http://127.0.0.1:8080';
const HOST = '127.0.0.1:8080';
const SECRET = 'an admin limits test secret of at least thirty-two characters';
const GRANT_PATH = '/admin/v1/tenants/acme/grants/readers';

interface Gateway {
  built: TestApp;
  database: TestDatabase;
}

async function startGateway(idp: LocalIssuer, env: Record<string, string>): Promise<Gateway> {
  const database = await createTestDatabase('admin_limits');
  const built = await buildTestApp({
    bootstrap: {
      configDir: '.',
      document: {
        tenants: [
          {
            id: 'acme',
            auth: { issuers: [{ issuer: idp.issuer, jwksUri: idp.jwksUri }] },
            grants: [{ name: 'all', match: {}, allow: [{ source: 'notes' }] }],
            sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://a', name: 'a', text: 'a' }] }],
            adminRoleBindings: [{ name: 'admins', scopes: ['gateway:admin'] }],
          },
          { id: 'open', anonymous: true, sources: [{ id: 'notes', type: 'static', resources: [] }] },
        ],
      },
    },
    env: { SECRETS_KEY: SECRET, DATABASE_URL: database.url, ...env },
    admin: {},
  });
  return { built, database };
}

async function stopGateway(gateway: Gateway | undefined): Promise<void> {
  await gateway?.built.close();
  await gateway?.database.drop();
}

function admin(
  gateway: Gateway,
  options: {
    method?: 'GET' | 'PUT';
    url?: string;
    token?: string;
    ip?: string;
    forwardedFor?: string;
    contentType?: string;
    payload?: string;
  } = {},
): Promise<LightMyRequestResponse> {
  return gateway.built.app.inject({
    method: options.method ?? 'GET',
    url: options.url ?? '/admin/v1/tenants/acme/grants',
    ...(options.ip === undefined ? {} : { remoteAddress: options.ip }),
    headers: {
      host: HOST,
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...(options.forwardedFor === undefined ? {} : { 'x-forwarded-for': options.forwardedFor }),
      ...(options.contentType === undefined ? {} : { 'content-type': options.contentType }),
    },
    ...(options.payload === undefined ? {} : { payload: options.payload }),
  });
}

function expectProblem(response: LightMyRequestResponse, status: number, type: string): Record<string, unknown> {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = response.json<Record<string, unknown>>();
  expect(body).toMatchObject({ type: `urn:mcpgw:admin:problem:${type}`, status });
  // The registry's status and title for the type, as every admin refusal has.
  expect(adminProblemRegistry[type as AdminProblemType]).toMatchObject({ status, title: body.title });
  return body;
}

function expectRateLimited(response: LightMyRequestResponse, who: RegExp): void {
  const body = expectProblem(response, 429, 'too-many-requests');
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  expect(body.detail).toMatch(who);
}

const expectChallenge = (response: LightMyRequestResponse): void => {
  expectProblem(response, 401, 'unauthenticated');
  expect(response.headers['www-authenticate']).toMatch(/^Bearer resource_metadata="[^"]+"/);
};

let idp: LocalIssuer;
const token = (sub: string) => idp.token({ aud: `${BASE}/admin/v1/tenants/acme`, scope: 'gateway:admin', sub });

beforeAll(async () => {
  idp = await startLocalIssuer({ path: '/admin-limits' });
});
afterAll(async () => {
  await idp?.close();
});

describe('the admin API authenticates before it reads a body', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway(idp, {});
  });
  afterAll(() => stopGateway(gateway));

  it('answers an anonymous malformed, oversized or non-JSON body with 401 and the challenge, and changes nothing', async () => {
    const before = await gateway.built.app.controlPlane!.store.listEntities('acme', 'grant');
    const write = (payload: string, contentType = 'application/json', bearer?: string) =>
      admin(gateway, {
        method: 'PUT',
        url: GRANT_PATH,
        payload,
        contentType,
        ...(bearer === undefined ? {} : { token: bearer }),
      });
    const huge = `{"match":{},"allow":[],"pad":"${'x'.repeat(BODY_LIMIT_BYTES)}"}`;
    expectChallenge(await write('{"match": {not json'));
    expectChallenge(await write(huge));
    expectChallenge(await write('match=all', 'text/plain'));
    expect(await gateway.built.app.controlPlane!.store.listEntities('acme', 'grant')).toEqual(before);
    // The same bodies from an admin are read, and refused for what they are: the 401s above were not.
    const valid = await token('alice');
    expect(
      expectProblem(await write('{"match": {not json', 'application/json', valid), 400, 'invalid-request'),
    ).toMatchObject({ detail: 'The body is not valid JSON' });
    expect(expectProblem(await write(huge, 'application/json', valid), 400, 'invalid-request')).toMatchObject({
      detail: 'The body is too large',
    });
    expectProblem(await write('match=all', 'text/plain', valid), 415, 'unsupported-media-type');
  });

  it('answers 401 while a declared body has not even arrived', async () => {
    const address = await gateway.built.app.listen({ host: '127.0.0.1', port: 0 });
    const port = Number(new URL(address).port);
    // Headers announcing 600 KB, then nothing: a server that read the body first would still be waiting.
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          `PUT ${GRANT_PATH} HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nContent-Length: 600000\r\n\r\n{"match":`,
        );
      });
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        if (received.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 401 /);
    expect(reply.toLowerCase()).toContain('www-authenticate: bearer resource_metadata=');
  });
});

describe('admin API rate limits, the connection as the client (no TRUSTED_PROXIES)', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway(idp, {
      RATE_LIMIT_ADMIN_IP_PER_MINUTE: '5',
      RATE_LIMIT_ADMIN_PER_MINUTE: '3',
    });
  });
  afterAll(() => stopGateway(gateway));

  it('refuses an address over its limit with 429 before any token is verified; other addresses go on', async () => {
    const ip = '203.0.113.10';
    for (let i = 0; i < 5; i += 1) expectChallenge(await admin(gateway, { ip }));
    const fetches = idp.hitCount('/admin-limits/jwks');
    // A valid token from the same address is refused before it is looked at (no key fetch).
    expectRateLimited(await admin(gateway, { ip, token: await token('alice') }), /client address/);
    expectRateLimited(await admin(gateway, { ip, method: 'PUT', url: GRANT_PATH, payload: '{' }), /client address/);
    expect(idp.hitCount('/admin-limits/jwks')).toBe(fetches);
    expectChallenge(await admin(gateway, { ip: '203.0.113.11' }));
    // The API's own description is counted too.
    expectRateLimited(await admin(gateway, { ip, url: '/admin/v1/openapi.json' }), /client address/);
  });

  it("counts the browser sign-in's routes against the same per-address limit", async () => {
    const ip = '203.0.113.40';
    // acme has no browser sign-in: 404, yet each attempt counts (a callback would call the identity provider).
    for (let i = 0; i < 5; i += 1) {
      expectProblem(await admin(gateway, { ip, url: '/admin/v1/tenants/acme/login' }), 404, 'not-found');
    }
    expectRateLimited(await admin(gateway, { ip, url: '/admin/v1/tenants/acme/callback?code=x' }), /client address/);
    expectRateLimited(await admin(gateway, { ip }), /client address/);
  });

  it('refuses one admin over its limit whatever address it comes from; another admin goes on', async () => {
    const alice = await token('alice');
    for (let i = 0; i < 3; i += 1) {
      expect((await admin(gateway, { token: alice, ip: `198.51.100.${i + 1}` })).statusCode).toBe(200);
    }
    expectRateLimited(await admin(gateway, { token: alice, ip: '198.51.100.9' }), /this caller/);
    expect((await admin(gateway, { token: await token('bob'), ip: '198.51.100.9' })).statusCode).toBe(200);
  });

  it('ignores X-Forwarded-For: a caller cannot pick the address it is counted under', async () => {
    const ip = '203.0.113.20';
    for (let i = 0; i < 5; i += 1) {
      expectChallenge(await admin(gateway, { ip, forwardedFor: `192.0.2.${i + 1}` }));
    }
    expectRateLimited(await admin(gateway, { ip, forwardedFor: '192.0.2.99' }), /client address/);
    // Nor does a loopback peer lose its exemption by naming another address, or an outside one gain it.
    for (let i = 0; i < 8; i += 1) expectChallenge(await admin(gateway, { forwardedFor: '203.0.113.20' }));
    expectRateLimited(await admin(gateway, { ip, forwardedFor: '127.0.0.1' }), /client address/);
  });
});

describe('admin API rate limits behind trusted proxies (TRUSTED_PROXIES)', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway(idp, {
      RATE_LIMIT_ADMIN_IP_PER_MINUTE: '3',
      TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1',
      RATE_LIMIT_IP_PER_MINUTE: '2',
    });
  });
  afterAll(() => stopGateway(gateway));

  it('counts the client X-Forwarded-For names through a trusted proxy, right to left past trusted hops', async () => {
    const proxy = '10.1.2.3';
    for (let i = 0; i < 3; i += 1) expectChallenge(await admin(gateway, { ip: proxy, forwardedFor: '198.51.100.7' }));
    expectRateLimited(await admin(gateway, { ip: proxy, forwardedFor: '198.51.100.7' }), /client address/);
    // Another client behind the same proxy is counted apart.
    expectChallenge(await admin(gateway, { ip: proxy, forwardedFor: '198.51.100.8' }));
    // A client prepending a spoofed hop is still counted by the address the proxy saw (the rightmost untrusted one),
    expectRateLimited(
      await admin(gateway, { ip: proxy, forwardedFor: '198.51.100.8, 198.51.100.7' }),
      /client address/,
    );
    // and a chain of trusted proxies is walked through to the client.
    expectRateLimited(await admin(gateway, { ip: proxy, forwardedFor: '198.51.100.7, 10.9.9.9' }), /client address/);
  });

  it('ignores X-Forwarded-For from a peer it does not trust', async () => {
    const ip = '203.0.113.30';
    for (let i = 0; i < 3; i += 1) expectChallenge(await admin(gateway, { ip, forwardedFor: `192.0.2.${i + 1}` }));
    expectRateLimited(await admin(gateway, { ip, forwardedFor: '192.0.2.50' }), /client address/);
  });

  it('exempts no loopback peer once a proxy is configured: a same-host proxy forwards everyone', async () => {
    for (let i = 0; i < 3; i += 1) expectChallenge(await admin(gateway, {}));
    expectRateLimited(await admin(gateway, {}), /client address/);
    // The MCP endpoint's gateway-wide limit likewise counts each client behind the loopback proxy.
    const mcp = (forwardedFor: string) =>
      gateway.built.app.inject({
        method: 'POST',
        url: '/t/open/mcp',
        headers: {
          host: HOST,
          'content-type': 'application/json',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'resources/list',
          'x-forwarded-for': forwardedFor,
        },
        payload: {
          jsonrpc: '2.0',
          id: 1,
          method: 'resources/list',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        },
      });
    expect((await mcp('198.51.100.40')).statusCode).toBe(200);
    expect((await mcp('198.51.100.40')).statusCode).toBe(200);
    expect((await mcp('198.51.100.40')).statusCode).toBe(429);
    expect((await mcp('198.51.100.41')).statusCode).toBe(200);
  });
});

describe('admin API load shedding', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway(idp, { SHED_EVENT_LOOP_DELAY_MS: '0', SHED_EVENT_LOOP_STALL_MS: '50' });
  });
  afterAll(() => stopGateway(gateway));

  it('answers 503 with Retry-After and a problem while the event loop is stalled, before authenticating', async () => {
    const alice = await token('alice');
    // Once the turns after the start are on time.
    const calm = async () => expect((await admin(gateway, { token: alice })).statusCode).toBe(200);
    await within(10_000, calm, 'an admitted request');
    const shed = gateway.built.app.limits.shedding.shed;
    // This turn runs 120 ms before the request is read, as the tail of a turn crowded with requests does.
    const until = performance.now() + 120;
    while (performance.now() < until);
    const refused = await admin(gateway, { token: alice });
    expectProblem(refused, 503, 'unavailable');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(gateway.built.app.limits.shedding.shed).toBe(shed + 1);
    // Turns on time again: admitted.
    await within(10_000, calm, 'an admitted request');
  });
});
