import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Source } from '@mcpgw/core';
import { ROWS_MAX_BYTES } from '../src/read-rows.js';
import { createFixture, readText, type Fixture } from './fixture.js';

/**
 * A rows read stops at the size cap without first loading what lies past it:
 * measured as the bytes the server sends the gateway, through a counting TCP
 * relay between the source and Postgres.
 */
const P = 'db+postgres:///big';
const ROW_BYTES = 300 * 1024;
let fx: Fixture;
let relay: Server;
let source: Source;
let fromServer = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  fx = await createFixture('rows_memory');
  // 40 rows of 300 KiB of text each (~12 MiB of JSON), and one 4 MiB row.
  await fx.db.sql(`
    CREATE TABLE public.blobs (id int PRIMARY KEY, body text);
    INSERT INTO public.blobs SELECT g, repeat(md5(g::text), ${ROW_BYTES / 32}) FROM generate_series(1, 40) g;
    CREATE TABLE public.huge (id int PRIMARY KEY, body text);
    INSERT INTO public.huge SELECT g, repeat(md5(g::text), ${(4 * 1024 * 1024) / 32}) FROM generate_series(1, 3) g;
  `);
  const target = new URL(fx.db.url);
  relay = createServer((client) => {
    const server = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(server);
    server.on('data', (chunk: Buffer) => (fromServer += chunk.length));
    client.pipe(server).pipe(client);
    const end = () => {
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const address = relay.address();
  if (address === null || typeof address === 'string') throw new Error('relay has no port');
  const url = new URL(fx.db.url);
  url.host = `127.0.0.1:${address.port}`;
  source = fx.make({ connection: { url: url.toString() }, rows: { enabled: true, maxLimit: 50 } }, 'big');
});
afterAll(async () => {
  await fx?.close();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => relay?.close(resolve));
});

/** Bytes the server sent while `work` ran. */
async function received<T>(work: () => Promise<T>): Promise<{ value: T; bytes: number }> {
  const before = fromServer;
  const value = await work();
  return { value, bytes: fromServer - before };
}

describe('rows reads under the size cap', () => {
  it('fetches little more than the 1 MiB cap for limit=40 rows of 300 KiB each', async () => {
    // Warm the pool, so the measurement holds only the read itself.
    await readText(source, `${P}/public/blobs`);
    const { value, bytes } = await received(() => readText(source, `${P}/public/blobs/rows?limit=40`));
    const doc = JSON.parse(value) as { rows: Array<{ id: number }>; next?: string };
    expect(doc.rows.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(doc.next).toMatch(/\/public\/blobs\/rows\?limit=40&after=/);
    expect(bytes).toBeLessThan(ROWS_MAX_BYTES + 256 * 1024);
  });

  it('refuses a single row over the cap without fetching it', async () => {
    const { value, bytes } = await received(() =>
      source.read(`${P}/public/huge/rows?limit=3`).then(
        () => 'read',
        (error: unknown) => (error as { code?: string }).code,
      ),
    );
    expect(value).toBe('MCPGW_RESOURCE_TOO_LARGE');
    expect(bytes).toBeLessThan(256 * 1024);
  });

  it('still pages through every row, following next', async () => {
    let uri: string | undefined = `${P}/public/blobs/rows?limit=40`;
    const ids: number[] = [];
    for (let pages = 0; uri !== undefined && pages < 40; pages++) {
      const doc = JSON.parse(await readText(source, uri)) as { rows: Array<{ id: number }>; next?: string };
      ids.push(...doc.rows.map((r) => r.id));
      uri = doc.next;
    }
    expect(ids).toEqual(Array.from({ length: 40 }, (_v, i) => i + 1));
  });
});
