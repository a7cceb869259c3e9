import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type OwnRedisServer, startRedisServer } from '@mcpgw/test-helpers/redis';
import { within } from '@mcpgw/test-helpers/within';

// Through the real gateway: its Redis (a child process this test
// owns) is killed mid-run and started again. Every request is answered 200
// with the full listing, and caching resumes by itself.

let redis: OwnRedisServer;
let gateway: StartedGateway;

beforeAll(async () => {
  redis = await startRedisServer();
  const dir = await mkdtemp(join(tmpdir(), 'gw-cache-outage-'));
  const resources = Array.from({ length: 5 }, (_, i) => ({ uri: `test://docs/${i}`, name: `doc ${i}`, text: `${i}` }));
  await writeFile(
    join(dir, 'gateway.json'),
    JSON.stringify({
      tenants: [{ id: 'acme', anonymous: true, sources: [{ id: 'docs', type: 'static', resources }] }],
    }),
  );
  gateway = await startGateway({ configPath: join(dir, 'gateway.json'), env: { REDIS_URL: redis.url } });
});

afterAll(async () => {
  await gateway?.close();
  await redis?.close();
});

async function list(): Promise<{ status: number; count: number }> {
  const response = await mcpPost<{ result?: { resources: unknown[] } }>(
    `${gateway.baseUrl}/t/acme/mcp`,
    'resources/list',
  );
  return { status: response.status, count: response.body.result?.resources.length ?? -1 };
}

const hits = () => gateway.app.cache.metrics().acme?.result.hits ?? 0;

describe('gateway with Redis going away', () => {
  it('answers every request while Redis is down, then caches again once it is back', async () => {
    await list();
    await list();
    expect(hits()).toBe(1);

    await redis.kill();
    const answers = [];
    for (let i = 0; i < 30; i += 1) answers.push(await list());
    expect(answers.filter((answer) => answer.status !== 200 || answer.count !== 5)).toEqual([]);
    const hitsWhileDown = hits();

    await redis.restart();
    const answersAfter: Awaited<ReturnType<typeof list>>[] = [];
    await within(
      10_000,
      async () => {
        answersAfter.push(await list());
        expect(hits()).toBeGreaterThan(hitsWhileDown);
      },
      'a cache hit once Redis is back',
    );
    expect(answersAfter.filter((answer) => answer.status !== 200 || answer.count !== 5)).toEqual([]);
  });
});
