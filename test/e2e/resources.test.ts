/**
 * End to end with the official client (@modelcontextprotocol/client 2.4.0)
 * against the gateway on a real loopback port, in both protocol eras, as
 * part of `npm test`: modern pinned to 2026-07-28 and legacy `initialize`.
 * Every HTTP exchange the client makes is recorded and each response checked
 * against that revision's schema.json (afterEach).
 */
import { ProtocolError, ResourceNotFoundError } from '@modelcontextprotocol/client';
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BINARY_BYTES,
  PAGE_SIZE,
  README_TEXT,
  REVISION_OF,
  SECRET_TEXT,
  UNICODE_NAME,
  UNICODE_TEXT,
  connectClient,
  docsUri,
  expectedListing,
  startE2eGateway,
} from './e2e-gateway.js';
import type { ConnectedClient, E2eGateway, Era } from './e2e-gateway.js';
import { expectWireValid, wireErrorOfRead } from './wire-expectations.js';

/** The wire code of "resource not found": -32602 since 2026-07-28, -32002 in 2025-11-25. */
const NOT_FOUND_CODE: Record<Era, number> = { modern: -32602, legacy: -32002 };

/** The PNG declared for test://static-binary in test/fixtures/e2e/gateway.config.json. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGOQm/AfAAJ9Aa5x8yHNAAAAAElFTkSuQmCC';

/**
 * URIs that try to reach docs/../outside/secret.txt, or something else that
 * is not a published file, through the `docs` files source (MCP 2026-07-28, Resources,
 * Security Considerations: "Servers MUST sanitize file paths to prevent
 * directory traversal attacks"). Each must read as "not found".
 */
const TRAVERSAL_URIS = [
  'file:///docs/../outside/secret.txt',
  'file:///docs/data/../../outside/secret.txt',
  'file:///docs/%2e%2e/outside/secret.txt',
  'file:///docs/%2E%2E/outside/secret.txt',
  'file:///docs/..%2foutside%2fsecret.txt',
  'file:///docs/..%5Coutside%5Csecret.txt',
  'file:///docs/..\\outside\\secret.txt',
  'file:///docs/data%2F..%2F..%2Foutside%2Fsecret.txt',
  'file:///docs/readme.md%00.txt',
  'file:///docs//outside/secret.txt',
  // A symlink inside the folder whose target is outside it.
  'file:///docs/escape.txt',
];

let e2e: E2eGateway;

beforeAll(async () => {
  e2e = await startE2eGateway();
});

afterAll(async () => {
  await e2e?.close();
});

describe.each(['modern', 'legacy'] as const)('%s era', (era) => {
  const revision = REVISION_OF[era];
  let connected: ConnectedClient;

  beforeAll(async () => {
    connected = await connectClient(e2e.url, era);
    expect(connected.client.getProtocolEra()).toBe(era);
  });

  afterAll(async () => {
    await connected?.close();
  });

  // Each test judges only the exchanges it caused; the handshake has its own test (handshake.test.ts).
  beforeEach(() => connected.recorder.clear());
  afterEach(() => expectWireValid(connected.recorder, revision));

  /** Reads through the wire every time: the client would otherwise serve a fresh result from its cache. */
  const read = (uri: string): Promise<ReadResourceResult> =>
    connected.client.readResource({ uri }, { cacheMode: 'bypass' });

  it('lists every resource exactly once, in order, following nextCursor across three pages', async () => {
    const { client } = connected;
    // Page by page, as a user paginating by hand: the first page through a
    // bare request (listResources() without a cursor walks every page itself).
    const pages = [await client.request({ method: 'resources/list', params: {} })];
    for (let cursor = pages[0]?.nextCursor; cursor !== undefined; cursor = pages.at(-1)?.nextCursor) {
      expect(pages.length, 'nextCursor never ends').toBeLessThan(10);
      pages.push(await client.listResources({ cursor }));
    }
    const expected = expectedListing();
    expect(pages.map((p) => p.resources.length)).toEqual([PAGE_SIZE, PAGE_SIZE, expected.length - 2 * PAGE_SIZE]);
    const uris = pages.flatMap((p) => p.resources.map((r) => r.uri));
    expect(uris).toEqual(expected);
    expect(new Set(uris).size).toBe(uris.length);

    const byUri = new Map<string, Resource>(pages.flatMap((p) => p.resources.map((r) => [r.uri, r])));
    expect(byUri.get(docsUri('data', 'bytes.bin'))).toMatchObject({
      name: 'bytes.bin',
      mimeType: 'application/octet-stream',
      size: BINARY_BYTES.length,
    });
    expect(byUri.get(docsUri(UNICODE_NAME))).toMatchObject({
      name: UNICODE_NAME,
      mimeType: 'text/plain',
      size: Buffer.byteLength(UNICODE_TEXT),
    });
    expect(byUri.get('test://static-text')).toMatchObject({ name: 'static-text', title: 'Static text resource' });
    // Nothing in a listing reveals where the folder is on disk.
    expect(JSON.stringify(pages)).not.toContain(e2e.dir);
  });

  it("gives the same list through the client's own page walk, and lists the template", async () => {
    const { resources } = await connected.client.listResources(undefined, { cacheMode: 'bypass' });
    expect(resources.map((r) => r.uri)).toEqual(expectedListing());
    const { resourceTemplates } = await connected.client.listResourceTemplates(undefined, { cacheMode: 'bypass' });
    expect(resourceTemplates).toEqual([
      expect.objectContaining({
        uriTemplate: 'test://template/{id}/data',
        name: 'template-data',
        mimeType: 'application/json',
      }),
    ]);
  });

  it('reads text: a static resource, a markdown file and a file with a non-ASCII name', async () => {
    expect((await read('test://static-text')).contents).toEqual([
      {
        uri: 'test://static-text',
        mimeType: 'text/plain',
        text: 'This is the content of the static text resource. Ünïcödé ✓',
      },
    ]);
    expect((await read(docsUri('readme.md'))).contents).toEqual([
      { uri: docsUri('readme.md'), mimeType: 'text/markdown', text: README_TEXT },
    ]);
    // Its Mcp-Name header needs the =?base64?…?= form on the modern wire.
    expect((await read(docsUri(UNICODE_NAME))).contents).toEqual([
      { uri: docsUri(UNICODE_NAME), mimeType: 'text/plain', text: UNICODE_TEXT },
    ]);
  });

  it('reads binary: every byte value of a file, and a static PNG, round-trip exactly', async () => {
    const file = (await read(docsUri('data', 'bytes.bin'))).contents;
    expect(file).toHaveLength(1);
    expect(file[0]).toMatchObject({ uri: docsUri('data', 'bytes.bin'), mimeType: 'application/octet-stream' });
    expect(file[0] && 'blob' in file[0]).toBe(true);
    const blob = file[0] && 'blob' in file[0] ? file[0].blob : '';
    expect(Buffer.from(blob, 'base64').equals(BINARY_BYTES)).toBe(true);

    const png = (await read('test://static-binary')).contents;
    expect(png).toEqual([{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_BASE64 }]);
  });

  it('reads a template: the values from the URI appear in the rendered JSON', async () => {
    const uri = 'test://template/order-42/data';
    const { contents } = await read(uri);
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
    const text = contents[0] && 'text' in contents[0] ? contents[0].text : '';
    expect(JSON.parse(text)).toEqual({ id: 'order-42', templateTest: true, data: 'Data for ID: order-42' });
  });

  it('answers a missing resource with a not-found error carrying the URI, never empty contents', async () => {
    const uri = 'test://no-such-resource';
    const error = await read(uri).then(
      (result) => result,
      (thrown: unknown) => thrown,
    );
    // The client turns both wire codes into ResourceNotFoundError (spec: clients accept -32002 too).
    expect(error).toBeInstanceOf(ResourceNotFoundError);
    expect((error as ResourceNotFoundError).uri).toBe(uri);
    const wire = wireErrorOfRead(connected.recorder, uri);
    expect(wire.error.code).toBe(NOT_FOUND_CODE[era]);
    expect(wire.error.data).toEqual({ uri });

    // The same for a well-formed URI of the files source naming no file.
    const missingFile = docsUri('data', 'nothing-here.txt');
    await expect(read(missingFile)).rejects.toBeInstanceOf(ResourceNotFoundError);
    expect(wireErrorOfRead(connected.recorder, missingFile).error).toMatchObject({
      code: NOT_FOUND_CODE[era],
      data: { uri: missingFile },
    });
  });

  it('answers every traversal attempt through the files source as not found, without leaking the file', async () => {
    for (const uri of TRAVERSAL_URIS) {
      const outcome = await read(uri).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      expect(outcome, `${uri} was served: ${JSON.stringify(outcome).slice(0, 300)}`).toHaveProperty('error');
      const error = (outcome as { error: unknown }).error;
      expect(ProtocolError.isInstance(error), `${uri} failed in the client, not on the wire: ${String(error)}`).toBe(
        true,
      );
      const wire = wireErrorOfRead(connected.recorder, uri);
      expect(wire.error, uri).toMatchObject({ code: NOT_FOUND_CODE[era], data: { uri } });
    }
    const everything = connected.recorder.exchanges.map((x) => x.responseText).join('\n');
    expect(everything).not.toContain(SECRET_TEXT.trim());
    expect(everything).not.toContain(e2e.dir);
  });

  it('refuses a tampered, truncated or made-up cursor with -32602, and still honours the genuine one', async () => {
    const { client } = connected;
    const first = await client.request({ method: 'resources/list', params: {} });
    const cursor = first.nextCursor;
    expect(cursor).toBeTypeOf('string');
    if (cursor === undefined) return;
    const middle = Math.floor(cursor.length / 4);
    const flipped = cursor[middle] === 'A' ? 'B' : 'A';
    const tampered = `${cursor.slice(0, middle)}${flipped}${cursor.slice(middle + 1)}`;
    for (const bad of [tampered, cursor.slice(0, -3), 'not-a-cursor', `${cursor}x`]) {
      const error = await client.listResources({ cursor: bad }).then(
        (result) => result,
        (thrown: unknown) => thrown,
      );
      const accepted = `cursor ${bad} was accepted: ${JSON.stringify(error).slice(0, 200)}`;
      expect(ProtocolError.isInstance(error), accepted).toBe(true);
      expect((error as ProtocolError).code).toBe(-32602);
    }
    const second = await client.listResources({ cursor });
    expect(second.resources[0]?.uri).toBe(expectedListing()[PAGE_SIZE]);
  });
});
