import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { NO_SHEDDING_ENV } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';
import { MAIN, type RunningProcess, runBuilt } from '../../apps/gateway/test/gateway-process.js';

// Replicas of one deployment started at the same moment (a fresh install, a
// scaled-out Deployment) against one empty control-plane database, with the
// same bootstrap file: each built gateway (`node apps/gateway/dist/main.js`)
// migrates and applies the file, and every one must come up and serve it,
// the file's rows written once.

const REPLICAS = 3;
// Enough rows that applying the file takes a while: replicas starting within that time overlap.
const SOURCES = 30;
const SECRETS_KEY = 'replicas-start-test-secret-key-0123456789';

const bootstrap = {
  tenants: [
    {
      id: 'notes',
      anonymous: true,
      sources: Array.from({ length: SOURCES }, (_, i) => ({
        id: `s${i}`,
        type: 'static',
        resources: [{ uri: `note://s${i}`, name: `n${i}`, text: `note ${i}` }],
      })),
    },
  ],
};

/** Every resource name the endpoint lists, page after page (MCP resources/list, `nextCursor`). */
async function listAll(endpoint: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const listed = await mcpPost<{ result?: { resources: { name: string }[]; nextCursor?: string } }>(
      endpoint,
      'resources/list',
      cursor === undefined ? {} : { cursor },
    );
    expect(listed.status).toBe(200);
    names.push(...(listed.body.result?.resources ?? []).map((resource) => resource.name));
    cursor = listed.body.result?.nextCursor;
  } while (cursor !== undefined);
  return names.sort();
}

let database: TestDatabase | undefined;
const running: RunningProcess[] = [];

afterEach(async () => {
  for (const replica of running.splice(0)) {
    replica.child.kill('SIGTERM');
    await replica.exited;
  }
  await database?.drop();
  database = undefined;
});

describe('replicas starting together on an empty control-plane database', () => {
  it('all come up and serve the bootstrap file, written once', { timeout: 120_000 }, async () => {
    database = await createTestDatabase('replicas_start');
    const workDir = await mkdtemp(join(tmpdir(), 'gw-replicas-start-'));
    const configPath = join(workDir, 'gateway.json');
    await writeFile(configPath, JSON.stringify(bootstrap));
    const ports = await Promise.all(Array.from({ length: REPLICAS }, () => freePort()));
    for (const [i, port] of ports.entries()) {
      running.push(
        runBuilt(MAIN, [], {
          env: {
            PORT: String(port),
            DATA_DIR: join(workDir, `replica-${i}`),
            GATEWAY_CONFIG: configPath,
            DATABASE_URL: database.url,
            SECRETS_KEY,
            LOG_LEVEL: 'warn',
            ...NO_SHEDDING_ENV,
          },
        }),
      );
    }

    for (const [i, port] of ports.entries()) {
      const replica = running[i]!;
      await within(90_000, async () => {
        if (replica.child.exitCode !== null) {
          throw new Error(`replica ${i} exited (${replica.child.exitCode}):\n${replica.stderr()}`);
        }
        const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (response) => response.status,
          () => 0,
        );
        return status === 200;
      });
      expect(await listAll(`http://127.0.0.1:${port}/t/notes/mcp`)).toEqual(
        Array.from({ length: SOURCES }, (_, s) => `n${s}`).sort(),
      );
    }

    // One create per declared row: no replica wrote what another had written.
    const audit = await database.sql(
      `SELECT action, target_type, count(*)::text AS count FROM audit_events GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    expect(audit.rows).toEqual([
      { action: 'create', target_type: 'source', count: String(SOURCES) },
      { action: 'create', target_type: 'tenant', count: '1' },
    ]);
  });
});
