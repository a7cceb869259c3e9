import { createHash, randomBytes } from 'node:crypto';
import { createSecretBox } from '@mcpgw/control-plane';
import { sealedSigningKeyKeys } from '@mcpgw/core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSigningKeys } from '../src/key-rotation.js';
import { createAuthorizationServerStorage } from '../src/store/authorization-server-storage.js';
import {
  issueCode,
  REDIRECT_URI,
  startProviderReplica,
  tokenRequest,
  type ProviderReplica,
} from './provider-replicas.js';
import {
  createTenant,
  openTestRedis,
  SQL_ENGINES,
  testTenantTag,
  type RedisUnderTest,
  type SqlUnderTest,
} from './storage-engines.js';

// The adapter as oidc-provider uses it: two real Provider instances (two
// replicas of one tenant's server) on one control-plane database, with and
// without Redis, redeeming one authorization code at the same time. Exactly
// one redemption may succeed (RFC 6749 section 4.1.2, "MUST NOT be used more
// than once"); the loser answers invalid_grant and, as for any reused code,
// the grant is revoked, so the winner's refresh token stops working too.

vi.setConfig({ testTimeout: 60_000 });

const box = createSecretBox(sealedSigningKeyKeys([Buffer.from('a server secret of at least thirty-two characters')]));

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

describe.each([
  ['Postgres and Redis', true],
  ['Postgres alone', false],
])('two replicas of a tenant authorization server on %s', (_name, withRedis) => {
  let sql: SqlUnderTest;
  let redis: RedisUnderTest | undefined;
  let tenant: string;
  let replicas: ProviderReplica[];
  let storage: ReturnType<typeof createAuthorizationServerStorage>[];

  beforeAll(async () => {
    sql = await SQL_ENGINES.postgres();
    redis = withRedis ? await openTestRedis('as-adapter') : undefined;
    tenant = await createTenant(sql.db, 'acme');
    const { keys } = await createSigningKeys({ db: sql.db, sealer: box, retentionSeconds: 3600 }).signingKeysOf(tenant);
    storage = [sql.db, sql.replica].map((db, i) =>
      createAuthorizationServerStorage({
        db,
        redis:
          redis === undefined
            ? undefined
            : { client: i === 0 ? redis.client : redis.replica, namespace: redis.namespace, tenantTag: testTenantTag },
      }),
    );
    replicas = await Promise.all(storage.map((each) => startProviderReplica(each.adapterFor(tenant), keys)));
  });
  afterAll(async () => {
    await Promise.all((replicas ?? []).map((replica) => replica.close()));
    await redis?.close();
    await sql?.close();
  });

  const redeem = (replica: ProviderReplica, code: string, verifier: string) =>
    tokenRequest(replica, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
    });

  it('redeems a code issued on one replica at the other, once', async () => {
    const { verifier, challenge } = pkce();
    const { code } = await issueCode(replicas[0]!.provider, 'alice', challenge);
    const first = await redeem(replicas[1]!, code, verifier);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', refresh_token: expect.any(String) });
    const again = await redeem(replicas[0]!, code, verifier);
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('lets exactly one of two simultaneous redemptions succeed, and revokes the grant', async () => {
    for (let round = 0; round < 4; round += 1) {
      const { verifier, challenge } = pkce();
      const { code, grantId } = await issueCode(replicas[0]!.provider, 'bob', challenge);
      const results = await Promise.all(replicas.map((replica) => redeem(replica, code, verifier)));
      const succeeded = results.filter((result) => result.status === 200);
      expect(succeeded, JSON.stringify(results)).toHaveLength(1);
      expect(results.find((result) => result.status !== 200)).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant' },
      });
      // The code was used twice: nothing issued under its grant remains usable.
      const refreshed = await tokenRequest(replicas[0]!, {
        grant_type: 'refresh_token',
        refresh_token: String(succeeded[0]!.body.refresh_token),
      });
      expect(refreshed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect(await storage[0]!.stores.sql.find(tenant, 'Grant', grantId)).toBeUndefined();
    }
  });

  it('rotates a refresh token once when two replicas refresh it at the same time', async () => {
    const { verifier, challenge } = pkce();
    const { code } = await issueCode(replicas[0]!.provider, 'carol', challenge);
    const issued = await redeem(replicas[0]!, code, verifier);
    const refreshToken = String(issued.body.refresh_token);
    const results = await Promise.all(
      replicas.map((replica) => tokenRequest(replica, { grant_type: 'refresh_token', refresh_token: refreshToken })),
    );
    expect(
      results.filter((result) => result.status === 200),
      JSON.stringify(results),
    ).toHaveLength(1);
  });

  it(`keeps the short-lived models ${withRedis ? 'in Redis' : 'in SQL'} and the long-lived ones in SQL`, async () => {
    const { challenge } = pkce();
    const { code, grantId } = await issueCode(replicas[0]!.provider, 'dave', challenge);
    const { stores } = storage[0]!;
    const codeId = (await replicas[0]!.provider.AuthorizationCode.find(code))?.jti;
    expect(codeId).toEqual(expect.any(String));
    expect(await stores.sql.find(tenant, 'Grant', grantId)).toMatchObject({ accountId: 'dave' });
    if (withRedis) {
      expect(await stores.redis?.find(tenant, 'AuthorizationCode', codeId!)).toMatchObject({ grantId });
      expect(await stores.sql.find(tenant, 'AuthorizationCode', codeId!)).toBeUndefined();
    } else {
      expect(await stores.sql.find(tenant, 'AuthorizationCode', codeId!)).toMatchObject({ grantId });
    }
    // revokeByGrantId through any model's adapter reaches every store.
    await storage[0]!.adapterFor(tenant)('AccessToken').revokeByGrantId(grantId);
    expect(await replicas[1]!.provider.AuthorizationCode.find(code)).toBeUndefined();
  });
});
