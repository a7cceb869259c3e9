import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';
import { within } from '@mcpgw/test-helpers/within';
import { MAIN, type RunningProcess, runBuilt } from '../../apps/gateway/test/gateway-process.js';

// Overload: with the load generator far past capacity, 503/429 with
// Retry-After and a bounded p99 for the requests admitted. A built
// gateway in its own process gets a load generator that ignores Retry-After
// (200 connections, each a new uncached resources/list of 500 descriptors as
// soon as the last one answers) for 3 s. Shedding is set to trip on event-loop
// utilization, so it trips on any machine, fast or slow. No request may fail
// otherwise; every refusal says when to come back in a JSON-RPC body. The
// admitted requests' p99 against the 1 s target of docs/operations.md ("Limits
// and overload") is a latency claim, so `bench/overload.ts` measures it, not
// this test: on a shared machine a test would pass or fail by its speed.

const CONNECTIONS = 200;
const LOAD_MS = 3_000;

const resources = Array.from({ length: 500 }, (_, i) => ({
  uri: `test://docs/${i}`,
  name: `document ${i}`,
  description: `The document numbered ${i}, with a description long enough to cost something to serialize`,
  text: `${i}`,
}));

let dir: string;
let port: number;
let gateway: RunningProcess;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-overload-'));
  await writeFile(
    join(dir, 'gateway.json'),
    JSON.stringify({
      tenants: [
        { id: 'acme', anonymous: true, sources: [{ id: 'docs', type: 'static', resources, ttlMs: { list: 0 } }] },
      ],
    }),
  );
  port = await freePort();
  gateway = runBuilt(MAIN, [], {
    env: {
      PORT: String(port),
      DATA_DIR: join(dir, 'data'),
      GATEWAY_CONFIG: join(dir, 'gateway.json'),
      LOG_LEVEL: 'warn',
      SHED_EVENT_LOOP_UTILIZATION: '0.6',
    },
  });
  // Warnings only (no access line per request under load), so readiness is polled, not read from the log.
  const { child, stderr } = gateway;
  // Up to the hook's own 90 s: a new PGlite store on a loaded machine takes most of a minute to open.
  await within(
    85_000,
    async () => {
      if (child.exitCode !== null) throw new Error(`the built gateway exited (${child.exitCode}):\n${stderr()}`);
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    },
    'the built gateway ready',
  );
}, 90_000);

afterAll(async () => {
  if (gateway !== undefined && gateway.child.exitCode === null && gateway.child.signalCode === null) {
    gateway.child.kill('SIGTERM');
    await gateway.exited;
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

const payload = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'resources/list',
  params: { _meta: MODERN_META },
});

function post(agent: Agent): Promise<Answer> {
  const failed = (error: Error): Answer => ({ status: 0, retryAfter: undefined, body: error.message });
  return new Promise((resolve) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        path: '/t/acme/mcp',
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(payload),
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'resources/list',
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => resolve(failed(error)));
        response.on('end', () => {
          const header = response.headers['retry-after'];
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: typeof header === 'string' ? header : undefined,
            // Admitted answers are large; only refusals' bodies are looked at.
            body: response.statusCode === 200 ? '' : Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    outgoing.setTimeout(20_000, () => outgoing.destroy(new Error('no answer within 20 s')));
    outgoing.on('error', (error) => resolve(failed(error)));
    outgoing.end(payload);
  });
}

describe('a gateway far past its capacity', () => {
  it('refuses with 503/429, Retry-After and a JSON-RPC body, admits some, and fails nothing', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    // The flood starts once the gateway admits requests: right after a start its event loop is
    // still busy (a new PGlite store), and it would refuse the whole flood for that reason alone.
    await within(30_000, async () => expect((await post(agent)).status).toBe(200), 'an admitted request');
    const answers: Answer[] = [];
    const until = performance.now() + LOAD_MS;
    try {
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (performance.now() < until) answers.push(await post(agent));
        }),
      );
    } finally {
      agent.destroy();
    }

    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 503 || answer.status === 429);
    const failed = answers.filter((answer) => answer.status !== 200 && answer.status !== 503 && answer.status !== 429);
    expect(failed.map((answer) => `${answer.status} ${answer.body.slice(0, 200)}`)).toEqual([]);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.filter((answer) => !/^\d+$/.test(answer.retryAfter ?? ''))).toEqual([]);
    for (const answer of refused) {
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
    expect(admitted.length).toBeGreaterThan(0);
    // The replica is still healthy once the flood is over.
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
