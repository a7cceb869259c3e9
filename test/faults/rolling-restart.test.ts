import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { NO_SHEDDING_ENV } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';
import { MAIN, type RunningProcess, runBuilt } from '../../apps/gateway/test/gateway-process.js';
import { type RetryingProxy, startRetryingProxy } from './retrying-proxy.js';

// A rolling restart of two replicas behind a proxy under load: zero failed
// requests. Two built gateways (`node apps/gateway/dist/main.js`)
// share one control-plane database and SECRETS_KEY, as the compose stack's
// replicas do, behind a retrying round-robin proxy (what infra/caddy/Caddyfile
// configures). While a load loop lists resources through the proxy, replica 1
// gets SIGTERM, is started again and waits for /readyz, then replica 2 the same.
// A stopping replica finishes what it has in flight and answers 503 on kept-alive
// connections (Fastify `return503OnClosing`); then its port refuses: both are
// retried on the other replica, so no caller sees a failure.

const RESOURCES = Array.from({ length: 20 }, (_, i) => ({ uri: `note://n${i}`, name: `n${i}`, text: `note ${i}` }));
const SECRETS_KEY = 'rolling-restart-test-secret-key-0123456789';
const LOAD_WORKERS = 4;
/** A cap on the load should the test stop before it calls `stop()`; the load ends on `stop()`, not on a clock. */
const LOAD_MAX_REQUESTS = 50_000;

let database: TestDatabase;
let workDir: string;
let proxy: RetryingProxy;
const ports: number[] = [];
const replicas: RunningProcess[] = [];

function startReplica(index: number): RunningProcess {
  const replica = runBuilt(MAIN, [], {
    env: {
      PORT: String(ports[index]),
      DATA_DIR: join(workDir, `replica-${index + 1}`),
      GATEWAY_CONFIG: join(workDir, 'gateway.json'),
      DATABASE_URL: database.url,
      SECRETS_KEY,
      LOG_LEVEL: 'warn',
      ...NO_SHEDDING_ENV,
    },
    killAfterMs: 120_000,
  });
  replicas[index] = replica;
  return replica;
}

async function waitReady(port: number, limitMs = 30_000): Promise<void> {
  await within(
    limitMs,
    async () => expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200),
    `the replica on port ${port} ready`,
  );
}

beforeAll(async () => {
  database = await createTestDatabase('rolling');
  workDir = await mkdtemp(join(tmpdir(), 'gw-rolling-'));
  await writeFile(
    join(workDir, 'gateway.json'),
    JSON.stringify({
      tenants: [{ id: 'notes', anonymous: true, sources: [{ id: 'inline', type: 'static', resources: RESOURCES }] }],
    }),
  );
  ports.push(await freePort(), await freePort());
  // One after the other: both would otherwise race to migrate the fresh control-plane database.
  startReplica(0);
  await waitReady(ports[0]!);
  startReplica(1);
  await waitReady(ports[1]!);
  proxy = await startRetryingProxy(ports);
}, 90_000);

afterAll(async () => {
  await proxy?.close();
  for (const replica of replicas) {
    if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill('SIGKILL');
    await replica.exited;
  }
  await database?.drop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

interface Outcome {
  ok: number;
  failures: string[];
}

/** `resources/list` through the proxy from a few workers until `stop()` (or the request cap). */
function loadLoop(): { stop(): void; done: Promise<Outcome> } {
  let stopped = false;
  let sent = 0;
  const outcome: Outcome = { ok: 0, failures: [] };
  const worker = async () => {
    while (!stopped && sent < LOAD_MAX_REQUESTS) {
      sent += 1;
      try {
        const response = await mcpPost<{ result?: { resources: unknown[] } }>(
          `${proxy.url}/t/notes/mcp`,
          'resources/list',
        );
        if (response.status === 200 && response.body.result?.resources.length === RESOURCES.length) outcome.ok += 1;
        else outcome.failures.push(`${response.status} ${response.text.slice(0, 200)}`);
      } catch (error) {
        outcome.failures.push(error instanceof Error ? error.message : String(error));
      }
    }
  };
  const done = Promise.all(Array.from({ length: LOAD_WORKERS }, worker)).then(() => outcome);
  return { stop: () => (stopped = true), done };
}

/** Polls `condition`; throws after `limitMs`. */
async function until(condition: () => boolean, limitMs = 30_000): Promise<void> {
  await within(limitMs, condition, 'the load to make progress');
}

async function restart(index: number): Promise<void> {
  const old = replicas[index]!;
  old.child.kill('SIGTERM');
  const exit = await old.exited;
  expect(exit, `replica ${index + 1} stops cleanly on SIGTERM:\n${exit.stderr}`).toMatchObject({ code: 0 });
  startReplica(index);
  await waitReady(ports[index]!);
}

describe('a rolling restart of two replicas behind a retrying proxy', () => {
  it('fails no request while each replica in turn is stopped, started again and becomes ready', async () => {
    const load = loadLoop();
    try {
      // Let traffic reach both replicas before the first one goes.
      await until(() => proxy.answered.every((count) => count >= 20));

      await restart(0);
      const afterFirst = [...proxy.answered];
      await restart(1);
      // Traffic continues on both restarted replicas before the load stops.
      await until(() => proxy.answered[0]! >= afterFirst[0]! + 20 && proxy.answered[1]! >= afterFirst[1]! + 20);
    } finally {
      load.stop();
    }
    const outcome = await load.done;

    expect(outcome.failures).toEqual([]);
    expect(outcome.ok).toBeGreaterThan(100);
    // The fault was real: requests met a stopping or stopped replica and went to the other one.
    expect(proxy.retries()).toBeGreaterThan(0);
  }, 90_000);
});
