/**
 * A deleted tenant's hosted authorization server leaves nothing in Redis:
 * its sessions, codes and interactions (which no foreign key cascades) are
 * forgotten on every replica that sees the deletion, so a tenant created
 * again under the same id starts with none of them. On a real gateway with
 * a Postgres control plane and real Redis, through the admin API.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintOperatorToken } from '@mcpgw/gateway/testing';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';
import { inspector, redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';

const SECRET = 'a tenant deletion test server secret of at least thirty-two characters';
const SHORT_LIVED = ['Session', 'AuthorizationCode', 'Interaction'] as const;

let database: TestDatabase;
let gateway: StartedGateway;
let operator: string;
const redis = inspector();
// Unique per run: the Redis server is shared.
const suffix = randomBytes(4).toString('hex');
const doomed = `doomed-${suffix}`;
const bystander = `bystander-${suffix}`;

async function admin(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${gateway.baseUrl}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${operator}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, text: await response.text(), etag: response.headers.get('etag') };
}

const createTenant = async (id: string) => {
  const created = await admin('POST', '/tenants', { id, name: id, auth: { requiredScopes: ['mcp:read'] } });
  expect(created.status, created.text).toBe(201);
};

/** Writes a session, a code and an interaction of `tenantId` through its Provider's adapter. */
async function signInState(tenantId: string): Promise<void> {
  const adapter = gateway.app.authorizationServerStorage.adapterFor(tenantId);
  await adapter('Session').upsert('session-1', { uid: 'uid-1', accountId: 'alice' }, 3600);
  await adapter('AuthorizationCode').upsert('code-1', { accountId: 'alice', grantId: 'grant-1' }, 60);
  await adapter('Interaction').upsert('interaction-1', { uid: 'interaction-1' }, 600);
}

async function found(tenantId: string): Promise<Record<string, unknown>> {
  const adapter = gateway.app.authorizationServerStorage.adapterFor(tenantId);
  return {
    Session: await adapter('Session').find('session-1'),
    SessionByUid: await adapter('Session').findByUid('uid-1'),
    AuthorizationCode: await adapter('AuthorizationCode').find('code-1'),
    Interaction: await adapter('Interaction').find('interaction-1'),
  };
}

// Keys name the tenant by the gateway's keyed tag (never its id in the clear).
const redisKeysOf = async (tenantId: string) => redis.keys(`mcpgw:as:{${gateway.app.settings.tenantTag(tenantId)}}:*`);

beforeAll(async () => {
  await requireRedis();
  await redis.connect();
  database = await createTestDatabase('as_tenant_deletion');
  gateway = await startGateway({
    admin: {},
    env: { DATABASE_URL: database.url, REDIS_URL: redisUrl(), SECRETS_KEY: SECRET },
  });
  operator = (await mintOperatorToken(gateway.config, {})).token;
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await database?.drop();
  redis.disconnect();
});

describe("a deleted tenant's hosted authorization server state", () => {
  it('is forgotten from Redis, so the tenant created again inherits no session, code or interaction', async () => {
    await createTenant(doomed);
    await createTenant(bystander);
    await signInState(doomed);
    await signInState(bystander);
    const before = await found(doomed);
    for (const model of [...SHORT_LIVED, 'SessionByUid']) expect(before[model], model).toBeDefined();
    // Kept in Redis, where no foreign key of the control plane reaches.
    expect((await redisKeysOf(doomed)).length).toBeGreaterThanOrEqual(SHORT_LIVED.length);
    expect(await redis.keys(`mcpgw:as:*${doomed}*`)).toEqual([]);

    const current = await admin('GET', `/tenants/${doomed}`);
    const deleted = await admin('DELETE', `/tenants/${doomed}`, undefined, { 'if-match': current.etag! });
    expect(deleted.status, deleted.text).toBe(204);
    await within(10_000, async () => expect(await redisKeysOf(doomed)).toEqual([]));

    await createTenant(doomed);
    await gateway.app.tenantSync.settled();
    expect(await found(doomed)).toEqual({
      Session: undefined,
      SessionByUid: undefined,
      AuthorizationCode: undefined,
      Interaction: undefined,
    });
    // Another tenant's sign-ins are untouched.
    const kept = await found(bystander);
    for (const model of [...SHORT_LIVED, 'SessionByUid']) expect(kept[model], model).toBeDefined();
  });
});
