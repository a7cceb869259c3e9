import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type TestDatabase, createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';
import { type OwnPostgresServer, startOwnPostgres } from './own-postgres.js';

// Postgres source stopped: that source answers -32603 fast; other sources
// and tenants are unaffected. Tenant acme's warehouse lives on
// a Postgres server this test owns (initdb on a spare port), which is stopped
// while the gateway runs with connections pooled to it, and started again.
// Tenant globex reads from the shared test server, and acme has a static
// source: neither notices. Each rows read asks for a different limit, so no
// answer comes from the result cache.

const ROWS = 5;

let own: OwnPostgresServer;
let shared: TestDatabase;
let gateway: StartedGateway;
let dir: string;
let limit = 0;

async function seed(url: string, table: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE public.${table} (id integer PRIMARY KEY, item text NOT NULL)`);
    await client.query(`INSERT INTO public.${table} SELECT n, 'item ' || n FROM generate_series(1, ${ROWS}) AS n`);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  [own, shared] = await Promise.all([startOwnPostgres(), createTestDatabase('fault_other')]);
  await Promise.all([seed(own.url, 'orders'), seed(shared.url, 'invoices')]);
  const postgresSource = (id: string, variable: string) => ({
    id,
    type: 'postgres',
    connection: { url: { $env: variable } },
    schemas: ['public'],
    rows: { enabled: true },
    // A wait no connection timeout could end within the test: a read that fails fast failed on the
    // refusal itself, whatever the machine's speed.
    pool: { connectionTimeoutMs: 60_000 },
  });
  dir = await mkdtemp(join(tmpdir(), 'gw-pg-stopped-'));
  await writeFile(
    join(dir, 'gateway.json'),
    JSON.stringify({
      tenants: [
        {
          id: 'acme',
          anonymous: true,
          sources: [
            postgresSource('warehouse', 'WAREHOUSE_URL'),
            { id: 'docs', type: 'static', resources: [{ uri: 'test://docs/a', name: 'a', text: 'still here' }] },
          ],
        },
        { id: 'globex', anonymous: true, sources: [postgresSource('ledger', 'LEDGER_URL')] },
      ],
    }),
  );
  gateway = await startGateway({
    configPath: join(dir, 'gateway.json'),
    env: { WAREHOUSE_URL: own.url, LEDGER_URL: shared.url },
  });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await own?.close();
  await shared?.drop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

interface ReadBody {
  result?: { contents: Array<{ text?: string }> };
  error?: { code: number; message: string };
}

/** A rows read with a limit never asked before (up to the source's maxLimit, 100), so never a cached answer. */
async function readRows(tenant: string, source: string, table: string) {
  limit += 1;
  return mcpPost<ReadBody>(`${gateway.baseUrl}/t/${tenant}/mcp`, 'resources/read', {
    uri: `db+postgres:///${source}/public/${table}/rows?limit=${limit}`,
  });
}

const readWarehouse = () => readRows('acme', 'warehouse', 'orders');
const readLedger = () => readRows('globex', 'ledger', 'invoices');

describe('a Postgres source whose server is stopped while the gateway runs', () => {
  it('answers -32603 at once (refused, not timed out), while the tenant’s other source and the other tenant keep answering', async () => {
    const before = await readWarehouse();
    expect(before.body.error).toBeUndefined();
    expect(before.body.result?.contents[0]?.text).toContain('item 1');

    await own.stop();

    for (let i = 0; i < 3; i += 1) {
      const down = await readWarehouse();
      expect(down.status).toBe(200);
      expect(down.body.error?.code).toBe(-32603);
      expect(down.body.error?.message).toContain('warehouse');
      expect(down.text).not.toContain(own.url);
    }

    const others = [];
    for (let i = 0; i < 10; i += 1) others.push(await readLedger());
    expect(others.filter((answer) => answer.body.error !== undefined || answer.status !== 200)).toEqual([]);
    const docs = await mcpPost<ReadBody>(`${gateway.baseUrl}/t/acme/mcp`, 'resources/read', { uri: 'test://docs/a' });
    expect(docs.body.result?.contents[0]?.text).toBe('still here');
  });

  it('reads the source again once its server is back, without a gateway restart', async () => {
    await own.start();
    await within(
      20_000,
      async () => {
        const answer = await readWarehouse();
        expect(answer.body.error).toBeUndefined();
        expect(answer.body.result?.contents[0]?.text).toContain('item 1');
      },
      'the warehouse read again',
    );
  });
});
