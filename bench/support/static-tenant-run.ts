/**
 * What an A/B bench of deployed gateways over one static-catalog tenant needs
 * (bench/young-generation-ab.ts, bench/after-idle-ab.ts): a local issuer, a
 * fresh control-plane database on Postgres, the gateways' environment (the
 * Redis store, the operator's limits on the tenant), a caller's token, and
 * the non-loopback address to serve on. `close()` removes the run's Redis
 * keys, drops the database and stops the issuer; stop the gateways first.
 */
import { randomBytes } from 'node:crypto';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import type * as FixtureModule from './hot-path-fixture.js';
import type * as DeployedFixtureModule from './deployed-fixture.js';
import type * as NonLoopbackModule from './non-loopback-address.js';
import type * as RunRedisKeysModule from './run-redis-keys.js';

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { BENCH_AUDIENCE } = await helper<typeof FixtureModule>('./hot-path-fixture.ts');
const { deployedGatewayEnv, OPERATOR_LIMITS } = await helper<typeof DeployedFixtureModule>('./deployed-fixture.ts');
const { nonLoopbackAddress } = await helper<typeof NonLoopbackModule>('./non-loopback-address.ts');
const { deleteRunKeys } = await helper<typeof RunRedisKeysModule>('./run-redis-keys.ts');

export interface StaticTenantRun {
  readonly tenantId: string;
  /** The gateways' environment (DATABASE_URL, REDIS_URL, SECRETS_KEY, the issuer, the tenant). */
  readonly env: Record<string, string>;
  /** A bearer token for the tenant's catalog (`mcp:read`, an hour). */
  readonly token: string;
  readonly host: string;
  close(): Promise<void>;
}

/** `prefix` names the run's database and tenant, so that a leftover of it says which bench left it. */
export async function openStaticTenantRun(prefix: string): Promise<StaticTenantRun> {
  await requireRedis();
  const issuer = await startLocalIssuer({ path: '/bench-idp' });
  const controlPlane = await createTestDatabase(`${prefix}_cp`);
  const tenantId = `${prefix}${randomBytes(3).toString('hex')}-static`;
  let env: Record<string, string> = {};
  const close = async () => {
    // The tenant's keys (under its keyed tag) and its rate-limit counters, which name it by the same tag.
    await deleteRunKeys(env.SECRETS_KEY, [tenantId]);
    await controlPlane.drop();
    await issuer.close();
  };
  try {
    env = await deployedGatewayEnv({
      issuer,
      controlPlaneUrl: controlPlane.url,
      redisUrl: redisUrl(),
      tenants: [{ id: tenantId, source: 'static', limits: OPERATOR_LIMITS }],
    });
    const token = await issuer.token({
      aud: BENCH_AUDIENCE,
      scope: 'mcp:read',
      exp: Math.floor(Date.now() / 1000) + 3600,
    });
    return { tenantId, env, token, host: nonLoopbackAddress(), close };
  } catch (error) {
    await close();
    throw error;
  }
}
