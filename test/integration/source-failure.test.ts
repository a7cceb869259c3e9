import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedGateway } from '../helpers/gateway.js';
import { freePort, startGateway } from '../helpers/gateway.js';
import { mcpPost } from '../helpers/mcp-http.js';

// Issue 5, Failure: a Postgres source whose database is down answers -32603
// naming the source (not the connection string) within 2 s, while the
// tenant's other sources keep working, and listings degrade instead of failing.
// The "database" is a loopback port nothing listens on: a real refused connection.

let gateway: StartedGateway;
let deadUrl: string;

beforeAll(async () => {
  deadUrl = `postgres://reader:s3cret-password@127.0.0.1:${await freePort()}/warehouse`;
  const config = {
    tenants: [
      {
        id: 'acme',
        anonymous: true,
        sources: [
          { id: 'docs', type: 'static', resources: [{ uri: 'test://docs/a', name: 'a', text: 'still here' }] },
          { id: 'warehouse', type: 'postgres', connection: { url: { $env: 'WAREHOUSE_URL' } }, schemas: ['public'] },
        ],
      },
    ],
  };
  const dir = await mkdtemp(join(tmpdir(), 'gw-failure-'));
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  gateway = await startGateway({ configPath: join(dir, 'gateway.json'), env: { WAREHOUSE_URL: deadUrl } });
});
afterAll(() => gateway?.close());

interface ResponseBody {
  result: { resources: Array<{ uri: string }>; contents: Array<{ text?: string }>; ttlMs: number };
  error: { code: number; message: string };
}
const call = (method: string, params: Record<string, unknown> = {}) =>
  mcpPost<ResponseBody>(`${gateway.baseUrl}/t/acme/mcp`, method, params);

describe('a source whose backend is down', () => {
  it('reads of it fail fast with -32603 naming the source, never the connection string', async () => {
    const started = Date.now();
    const response = await call('resources/read', { uri: 'db+postgres:///warehouse/public' });
    expect(Date.now() - started).toBeLessThan(2_000);
    const body = response.body;
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toContain('warehouse');
    expect(response.text).not.toContain('127.0.0.1');
    expect(response.text).not.toContain('s3cret');
  });

  it('leaves the other sources readable', async () => {
    const { body } = await call('resources/read', { uri: 'test://docs/a' });
    expect(body.result.contents).toEqual([expect.objectContaining({ text: 'still here' })]);
  });

  it('lists what still answers, with ttlMs 0 so nobody caches the partial view', async () => {
    const { body } = await call('resources/list');
    expect(body.result.resources.map((r) => r.uri)).toEqual(['test://docs/a']);
    expect(body.result.ttlMs).toBe(0);
  });
});
