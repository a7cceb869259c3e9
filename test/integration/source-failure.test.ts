import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Source, type SourceFactory, GatewayError } from '@mcpgw/core';
import { staticSourceFactory } from '@mcpgw/source-static';
import { createSourceRegistry } from '@mcpgw/gateway/testing';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { validateResponseBody } from '@mcpgw/test-helpers/wire-schema';

// A Postgres source whose database is down answers -32603
// naming the source (not the connection string) within 2 s, while the
// tenant's other sources keep working, and listings degrade instead of failing.
// The "database" is a loopback port nothing listens on: a real refused connection.
// Review finding 14: the degraded listing says which sources are missing, in
// `_meta["dev.mcpgw/unavailableSources"]`, on both eras. Postgres templates
// need no database, so a static source whose listings always fail
// (`static-down`) stands in for a down source of templates.

const UNAVAILABLE_SOURCES = 'dev.mcpgw/unavailableSources';

/** The static source type, except that every listing fails as a down backend does. */
const staticDownFactory: SourceFactory = {
  type: 'static-down',
  optionsSchema: staticSourceFactory.optionsSchema,
  model: staticSourceFactory.model,
  async create(options, context): Promise<Source> {
    const source = await staticSourceFactory.create(options as never, context);
    const unavailable = () =>
      Promise.reject(new GatewayError('MCPGW_SOURCE_UNAVAILABLE', `Source '${context.sourceId}' is unavailable`));
    return new Proxy(source, {
      get: (target, key) =>
        key === 'listResources' || key === 'listTemplates' ? unavailable : Reflect.get(target, key),
    });
  },
};

let gateway: StartedGateway;
let deadUrl: string;
const logLines: string[] = [];

beforeAll(async () => {
  deadUrl = `postgres://reader:s3cret-password@127.0.0.1:${await freePort()}/warehouse`;
  const config = {
    tenants: [
      {
        id: 'acme',
        anonymous: true,
        sources: [
          { id: 'docs', type: 'static', resources: [{ uri: 'test://docs/a', name: 'a', text: 'still here' }] },
          {
            id: 'warehouse',
            type: 'postgres',
            connection: { url: { $env: 'WAREHOUSE_URL' } },
            schemas: ['public'],
            // A wait no connection timeout could end: a read that fails failed on the refusal itself.
            pool: { connectionTimeoutMs: 60_000 },
          },
          {
            id: 'archive',
            type: 'static-down',
            resources: [{ uri: 'test://archive/a', name: 'a', text: 'gone' }],
            templates: [{ uriTemplate: 'test://archive/{x}', name: 'archive-item', text: 'x' }],
          },
        ],
      },
    ],
  };
  const dir = await mkdtemp(join(tmpdir(), 'gw-failure-'));
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  gateway = await startGateway({
    configPath: join(dir, 'gateway.json'),
    env: { WAREHOUSE_URL: deadUrl },
    registry: new Map([...createSourceRegistry(), [staticDownFactory.type, staticDownFactory]]),
    logStream,
  });
});
afterAll(() => gateway?.close());

interface ResponseBody {
  result: {
    resources: Array<{ uri: string }>;
    resourceTemplates: Array<{ name: string }>;
    contents: Array<{ text?: string }>;
    ttlMs: number;
    _meta?: Record<string, unknown>;
  };
  error: { code: number; message: string };
}
const call = (method: string, params: Record<string, unknown> = {}) =>
  mcpPost<ResponseBody>(`${gateway.baseUrl}/t/acme/mcp`, method, params);

/** One request on the initialize-era wire (2025-11-25, stateless: no session). */
async function legacyCall(method: string): Promise<ResponseBody> {
  const response = await fetch(`${gateway.baseUrl}/t/acme/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 3, method, params: {} }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as ResponseBody;
}

describe('a source whose backend is down', () => {
  it('reads of it fail fast with -32603 naming the source, never the connection string', async () => {
    // Fast: refused at once (the source's 60 s connection timeout outlasts the test's own).
    const response = await call('resources/read', { uri: 'db+postgres:///warehouse/public' });
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

  it('tells the client which sources the listing is missing, in _meta, on the 2026-07-28 wire', async () => {
    const { body, status } = await call('resources/list');
    expect(status).toBe(200);
    expect(body.result._meta).toMatchObject({
      'io.modelcontextprotocol/serverInfo': expect.objectContaining({ name: 'mcp-resource-gateway' }),
      [UNAVAILABLE_SOURCES]: ['warehouse', 'archive'],
    });
    expect(validateResponseBody('2026-07-28', 'resources/list', body)).toEqual([]);

    const templates = (await call('resources/templates/list')).body;
    const names = templates.result.resourceTemplates.map((t) => t.name);
    expect(names).toContain('warehouse-table');
    expect(names).not.toContain('archive-item');
    expect(templates.result._meta?.[UNAVAILABLE_SOURCES]).toEqual(['archive']);
    expect(templates.result.ttlMs).toBe(0);
    expect(validateResponseBody('2026-07-28', 'resources/templates/list', templates)).toEqual([]);
  });

  it('tells the client the same on the initialize-era wire', async () => {
    const list = await legacyCall('resources/list');
    expect(list.result.resources.map((r) => r.uri)).toEqual(['test://docs/a']);
    expect(list.result._meta).toEqual({ [UNAVAILABLE_SOURCES]: ['warehouse', 'archive'] });
    expect(validateResponseBody('2025-11-25', 'resources/list', list)).toEqual([]);

    const templates = await legacyCall('resources/templates/list');
    expect(templates.result._meta).toEqual({ [UNAVAILABLE_SOURCES]: ['archive'] });
    expect(validateResponseBody('2025-11-25', 'resources/templates/list', templates)).toEqual([]);
  });

  it('still logs each skipped source at warn', async () => {
    await call('resources/list');
    const warnings = logLines
      .map((line) => JSON.parse(line) as { level: number; msg: string; source?: string })
      .filter((entry) => entry.level === 40 && entry.msg.startsWith('source unavailable'));
    expect(new Set(warnings.map((entry) => entry.source))).toEqual(new Set(['warehouse', 'archive']));
  });
});
