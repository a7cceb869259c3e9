/**
 * What a user of an S3 source notices, written once and run against every
 * S3 implementation the tests can reach (s3rver always, MinIO when a Docker
 * engine answers).
 */
import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { isGatewayError, silentLogger, type ResourceContents, type ResourceDescriptor, type Source } from '@mcpgw/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import { createS3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';

/** A running S3-compatible server the suite may create buckets on. */
export interface S3Backend {
  readonly endpoint: string;
  readonly credentials: { accessKeyId: string; secretAccessKey: string };
  /** Path-style client for seeding data. */
  readonly client: S3Client;
  createBucket(name: string): Promise<void>;
  close(): Promise<void>;
}

export interface SeedObject {
  key: string;
  body: string | Uint8Array;
  contentType?: string;
}

/** Uploads with at most `concurrency` requests in flight. */
export async function putObjects(
  client: S3Client,
  bucket: string,
  objects: readonly SeedObject[],
  concurrency = 32,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < objects.length) {
      const object = objects[next++];
      if (object === undefined) return;
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: object.key, Body: object.body, ContentType: object.contentType }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, objects.length) }, worker));
}

/** Every descriptor of a source, page by page (at most 1,000 pages). */
export async function listAll(
  source: Source,
  limit: number,
): Promise<{ items: ResourceDescriptor[]; pageSizes: number[] }> {
  const items: ResourceDescriptor[] = [];
  const pageSizes: number[] = [];
  let position: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await source.listResources(position === undefined ? { limit } : { position, limit });
    items.push(...page.items);
    pageSizes.push(page.items.length);
    if (page.nextPosition === undefined) return { items, pageSizes };
    position = page.nextPosition;
  }
  throw new Error('listing did not end within 1,000 pages');
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

function text(contents: ResourceContents | undefined): string {
  if (contents === undefined || !('text' in contents))
    throw new Error(`expected text, got ${JSON.stringify(contents)}`);
  return contents.text;
}

function blob(contents: ResourceContents | undefined): Buffer {
  if (contents === undefined || !('blob' in contents)) throw new Error('expected a blob');
  return Buffer.from(contents.blob, 'base64');
}

/** RFC 6570 reserved expansion (`{+var}`) of one string value, as a client would do it. */
function reservedExpansion(value: string): string {
  return value.replace(/%[0-9A-Fa-f]{2}|[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]+/gu, (match) =>
    match.startsWith('%') && match.length === 3 ? match : encodeURIComponent(match),
  );
}

export function describeS3SourceBehaviour(backendName: string, start: () => Promise<S3Backend>): void {
  describe(`S3 source against ${backendName}`, () => {
    let backend: S3Backend;
    const sources: Source[] = [];

    function source(
      bucket: string,
      options: Record<string, unknown> = {},
      context: { sourceId?: string; tenantId?: string } = {},
    ): Source {
      const parsed = s3SourceOptionsSchema.parse({
        endpoint: backend.endpoint,
        forcePathStyle: true,
        credentials: backend.credentials,
        bucket,
        ...options,
      });
      const created = createS3Source(parsed, {
        sourceId: context.sourceId ?? 'files',
        tenantId: context.tenantId ?? 'tenant-a',
        configDir: '/',
        logger: silentLogger,
      });
      sources.push(created);
      return created;
    }

    beforeAll(async () => {
      backend = await start();
    });

    afterAll(async () => {
      await Promise.all(sources.map((each) => each.close()));
      await backend?.close();
    });

    describe('10,000 objects', () => {
      const folders = 100;
      const perFolder = 100;
      beforeAll(async () => {
        await backend.createBucket('bulk-objects');
        const objects: SeedObject[] = [];
        for (let f = 0; f < folders; f++) {
          for (let o = 0; o < perFolder; o++) {
            objects.push({
              key: `data/d${String(f).padStart(2, '0')}/obj-${String(o).padStart(3, '0')}.txt`,
              body: `${f}:${o}`,
            });
          }
        }
        // Outside the prefix: must never show up.
        objects.push({ key: 'outside.txt', body: 'no' });
        await putObjects(backend.client, 'bulk-objects', objects);
      }, 300_000);

      it('paginate without gaps or duplicates, folders included', async () => {
        const files = source('bulk-objects', { prefix: 'data/' });
        const { items, pageSizes } = await listAll(files, 250);
        expect(pageSizes.every((size) => size <= 250)).toBe(true);
        expect(pageSizes.length).toBeGreaterThanOrEqual(Math.ceil(10_100 / 250));

        const uris = items.map((item) => item.uri);
        expect(new Set(uris).size).toBe(uris.length);
        const expected: string[] = [];
        for (let f = 0; f < folders; f++) {
          const folder = `d${String(f).padStart(2, '0')}/`;
          expected.push(`s3:///files/${folder}`);
          for (let o = 0; o < perFolder; o++)
            expected.push(`s3:///files/${folder}obj-${String(o).padStart(3, '0')}.txt`);
        }
        expect(uris).toEqual(expected);

        const folder = items[0];
        expect(folder).toEqual({ uri: 's3:///files/d00/', name: 'd00/', title: 'd00/', mimeType: 'inode/directory' });
        const object = items[1];
        expect(object).toMatchObject({
          uri: 's3:///files/d00/obj-000.txt',
          name: 'd00/obj-000.txt',
          title: 'obj-000.txt',
          mimeType: 'text/plain',
          size: 3,
        });
        expect(Date.parse(object?.annotations?.lastModified ?? '')).toBeGreaterThan(Date.now() - 3_600_000);
        // Neither the bucket nor the endpoint leaks into a descriptor.
        const serialized = JSON.stringify(items);
        expect(serialized).not.toContain('bulk-objects');
        expect(serialized).not.toContain(new URL(backend.endpoint).host);
      }, 120_000);

      it('pages break anywhere, even between a folder and its first object', async () => {
        // 101 resources per folder: with 102 a page, the first page ends on folder "d01/".
        const files = source('bulk-objects', { prefix: 'data/' });
        const names: string[] = [];
        let position: string | undefined;
        for (let page = 0; page < 4; page++) {
          const result = await files.listResources(position === undefined ? { limit: 102 } : { position, limit: 102 });
          expect(result.items).toHaveLength(102);
          if (page === 0) expect(result.items.at(-1)?.name).toBe('d01/');
          names.push(...result.items.map((item) => item.name));
          position = result.nextPosition;
        }
        const expected: string[] = [];
        for (let f = 0; f < 5; f++) {
          expected.push(`d0${f}/`);
          for (let o = 0; o < perFolder; o++) expected.push(`d0${f}/obj-${String(o).padStart(3, '0')}.txt`);
        }
        expect(names).toEqual(expected.slice(0, 4 * 102));

        const small = source('bulk-objects', { prefix: 'data/d07/' });
        const { items, pageSizes } = await listAll(small, 7);
        expect(pageSizes.every((size) => size <= 7)).toBe(true);
        expect(items.map((item) => item.name)).toEqual(
          Array.from({ length: perFolder }, (_, o) => `obj-${String(o).padStart(3, '0')}.txt`),
        );
      }, 60_000);

      it('refuse a position they did not produce', async () => {
        const files = source('bulk-objects', { prefix: 'data/' });
        const error = await rejection(files.listResources({ position: 'not-a-position', limit: 10 }));
        expect(isGatewayError(error) && error.code).toBe('MCPGW_CURSOR_INVALID');
      });
    });

    describe('reads', () => {
      const binary = randomBytes(256 * 1024);
      const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      beforeAll(async () => {
        await backend.createBucket('reads-bucket');
        await putObjects(backend.client, 'reads-bucket', [
          { key: 'docs/random.bin', body: binary },
          { key: 'docs/all-bytes.txt', body: allBytes }, // text type, not UTF-8
          { key: 'docs/data.json', body: '{"ok":true}', contentType: 'application/json; charset=utf-8' },
          { key: 'docs/custom', body: '{"a":1}', contentType: 'application/vnd.example+json' },
          { key: 'docs/ü ber/€ report (1).txt', body: 'unicode path' },
          { key: 'docs/日本語 ファイル.md', body: '# 見出し' },
          { key: 'docs/emoji 🎉.txt', body: 'party' },
          { key: 'docs/exactly-1k.bin', body: Buffer.alloc(1024, 7) },
          { key: 'docs/over-1k.bin', body: Buffer.alloc(1025, 7) },
          { key: 'docs/empty.txt', body: '' },
          { key: 'secret.txt', body: 'outside the prefix' },
          { key: 'docs/folder/a.txt', body: 'A' },
          { key: 'docs/folder/b.bin', body: Buffer.from([0, 1, 2]) },
          { key: 'docs/folder/c.txt', body: 'C'.repeat(100) },
          { key: 'docs/folder/sub/deep.txt', body: 'deep' },
          { key: 'docs/only-sub/inner/x.txt', body: 'x' },
        ]);
      }, 60_000);

      it('round-trip binary content byte for byte', async () => {
        const files = source('reads-bucket', { prefix: 'docs/' });
        const contents = await files.read('s3:///files/random.bin');
        expect(contents).toHaveLength(1);
        expect(contents?.[0]).toMatchObject({ uri: 's3:///files/random.bin', mimeType: 'application/octet-stream' });
        expect(blob(contents?.[0]).equals(binary)).toBe(true);
        // A text type whose bytes are not UTF-8 comes back as a blob, unmangled.
        const notUtf8 = await files.read('s3:///files/all-bytes.txt');
        expect(notUtf8?.[0]?.mimeType).toBe('text/plain');
        expect(blob(notUtf8?.[0]).equals(allBytes)).toBe(true);
      });

      it('leave the validated options untouched (the SDK writes into credential objects)', async () => {
        const options = s3SourceOptionsSchema.parse({
          endpoint: backend.endpoint,
          forcePathStyle: true,
          credentials: backend.credentials,
          bucket: 'reads-bucket',
        });
        const before = JSON.stringify(options);
        const files = createS3Source(options, {
          sourceId: 'files',
          tenantId: 't',
          configDir: '/',
          logger: silentLogger,
        });
        sources.push(files);
        expect(await files.read('s3:///files/docs/empty.txt')).toHaveLength(1);
        expect(JSON.stringify(options)).toBe(before);
      });

      it('return text with the stored Content-Type where one was stored', async () => {
        const files = source('reads-bucket', { prefix: 'docs/' });
        const json = await files.read('s3:///files/data.json');
        expect(json).toEqual([{ uri: 's3:///files/data.json', mimeType: 'application/json', text: '{"ok":true}' }]);
        const custom = await files.read('s3:///files/custom');
        expect(custom).toEqual([
          { uri: 's3:///files/custom', mimeType: 'application/vnd.example+json', text: '{"a":1}' },
        ]);
        const empty = await files.read('s3:///files/empty.txt');
        expect(empty).toEqual([{ uri: 's3:///files/empty.txt', mimeType: 'text/plain', text: '' }]);
      });

      it('list and read unicode and space-containing keys by their listed URIs and by the template', async () => {
        const files = source('reads-bucket', { prefix: 'docs/' });
        const { items } = await listAll(files, 100);
        const byName = new Map(items.map((item) => [item.name, item]));
        const cases: Array<[string, string]> = [
          ['ü ber/€ report (1).txt', 'unicode path'],
          ['日本語 ファイル.md', '# 見出し'],
          ['emoji 🎉.txt', 'party'],
        ];
        expect(byName.get('ü ber/')?.uri).toBe('s3:///files/%C3%BC%20ber/');
        for (const [name, body] of cases) {
          const listed = byName.get(name);
          expect(listed, name).toBeDefined();
          expect(listed?.uri).not.toMatch(/[^\x21-\x7e]/); // only URI characters
          expect(text((await files.read(listed?.uri ?? ''))?.[0])).toBe(body);
          const [template] = await files.listTemplates();
          const expanded = (template?.uriTemplate ?? '').replace('{+key}', reservedExpansion(name));
          expect(expanded).toBe(listed?.uri);
        }
      });

      it('refuse objects over maxObjectBytes with an error that states the limit', async () => {
        const files = source('reads-bucket', { prefix: 'docs/', maxObjectBytes: 1024 });
        expect(blob((await files.read('s3:///files/exactly-1k.bin'))?.[0])).toHaveLength(1024);
        const error = await rejection(files.read('s3:///files/over-1k.bin'));
        expect(isGatewayError(error) && error.code).toBe('MCPGW_RESOURCE_TOO_LARGE');
        expect((error as Error).message).toContain('1 KiB (1024 bytes)');
        expect((error as Error).message).toContain('"files"');
      });

      it('answer not found for missing objects and folders, and for every traversal attempt', async () => {
        const files = source('reads-bucket', { prefix: 'docs/' });
        expect(await files.read('s3:///files/missing.txt')).toBeUndefined();
        expect(await files.read('s3:///files/missing/')).toBeUndefined();
        expect(await files.read('s3:///files/folder')).toBeUndefined(); // a folder is only addressed with its "/"
        for (const uri of [
          's3:///files/../secret.txt',
          's3:///files/folder/../../secret.txt',
          's3:///files/%2E%2E/secret.txt',
          's3:///files/..%2Fsecret.txt',
          's3:///files/folder%2Fa.txt',
          's3:///files/a%00.txt',
          's3:///files/folder%5Ca.txt',
          's3:///files/%C3%BC ber/',
          's3:///files/random.bin?x=1',
          's3:///other/secret.txt',
          's3://reads-bucket/docs/random.bin',
        ]) {
          expect(await files.read(uri), uri).toBeUndefined();
        }
        expect(files.owns('s3:///files/anything')).toBe(true);
        expect(files.owns('s3:///filesystem/x')).toBe(false);
      });

      it('read a folder as the objects directly under it, in key order', async () => {
        const files = source('reads-bucket', { prefix: 'docs/' });
        const contents = await files.read('s3:///files/folder/');
        expect(contents).toEqual([
          { uri: 's3:///files/folder/a.txt', mimeType: 'text/plain', text: 'A' },
          { uri: 's3:///files/folder/b.bin', mimeType: 'application/octet-stream', blob: 'AAEC' },
          { uri: 's3:///files/folder/c.txt', mimeType: 'text/plain', text: 'C'.repeat(100) },
        ]);
        // The root folder is the prefix itself.
        const root = await files.read('s3:///files/');
        expect(root?.map((entry) => entry.uri)).toEqual([
          's3:///files/all-bytes.txt',
          's3:///files/custom',
          's3:///files/data.json',
          's3:///files/emoji%20%F0%9F%8E%89.txt',
          's3:///files/empty.txt',
          's3:///files/exactly-1k.bin',
          's3:///files/over-1k.bin',
          's3:///files/random.bin',
          's3:///files/%E6%97%A5%E6%9C%AC%E8%AA%9E%20%E3%83%95%E3%82%A1%E3%82%A4%E3%83%AB.md',
        ]);
        // Only subfolders: an explanatory entry, never an empty contents array.
        const onlySub = await files.read('s3:///files/only-sub/');
        expect(onlySub).toHaveLength(1);
        expect(onlySub?.[0]).toMatchObject({ uri: 's3:///files/only-sub/', mimeType: 'text/plain' });
        expect(text(onlySub?.[0])).toContain('no objects directly under it');
      });

      it('stop a folder read at its bounds and say so', async () => {
        const byCount = source('reads-bucket', { prefix: 'docs/', folderRead: { maxObjects: 2 } });
        const counted = await byCount.read('s3:///files/folder/');
        expect(counted?.map((entry) => entry.uri)).toEqual([
          's3:///files/folder/a.txt',
          's3:///files/folder/b.bin',
          's3:///files/folder/',
        ]);
        expect(text(counted?.[2])).toContain('at most 2 objects');

        // a.txt (1) + b.bin (3) fit in 10 bytes; c.txt (100) does not, so the read stops there.
        const byBytes = source('reads-bucket', { prefix: 'docs/', folderRead: { maxTotalBytes: 10 } });
        const sized = await byBytes.read('s3:///files/folder/');
        expect(sized?.map((entry) => entry.uri)).toEqual([
          's3:///files/folder/a.txt',
          's3:///files/folder/b.bin',
          's3:///files/folder/',
        ]);
        expect(text(sized?.[2])).toContain('10 bytes in total');
      });

      it('publish one template addressing any key under the prefix', async () => {
        const files = source('reads-bucket', { prefix: 'docs/' });
        const templates = await files.listTemplates();
        expect(templates).toHaveLength(1);
        expect(templates[0]?.uriTemplate).toBe('s3:///files/{+key}');
        expect(JSON.stringify(templates)).not.toContain('reads-bucket');
      });
    });

    describe('health and change detection', () => {
      beforeAll(async () => {
        await backend.createBucket('watched-bucket');
        await putObjects(backend.client, 'watched-bucket', [
          { key: 'w/a.txt', body: 'one' },
          { key: 'w/sub/b.txt', body: 'two' },
        ]);
      });

      it('report health from HeadBucket without naming the bucket or endpoint', async () => {
        expect(await source('watched-bucket').health()).toEqual({ ok: true });
        const missing = await source('no-such-bucket-here').health();
        expect(missing.ok).toBe(false);
        expect(missing.detail).not.toContain('no-such-bucket-here');
        expect(missing.detail).not.toContain(new URL(backend.endpoint).host);
      });

      it('raise list-changed and resource-updated when objects come, change and go', async () => {
        const files = source('watched-bucket', { prefix: 'w/', changeDetection: { mode: 'poll', intervalMs: 150 } });
        const events: string[] = [];
        const stop = files.watch?.((change) =>
          events.push(change.type === 'list-changed' ? 'list-changed' : `updated ${change.uri}`),
        );
        expect(stop).toBeDefined();
        // The first scan sets the baseline.
        await files.settled?.();
        expect(events).toEqual([]);

        await putObjects(backend.client, 'watched-bucket', [{ key: 'w/sub/new.txt', body: 'new' }]);
        await within(10_000, () => expect(events).toContain('list-changed'), 'a list change');
        expect(events).toContain('updated s3:///files/sub/');
        events.length = 0;

        await putObjects(backend.client, 'watched-bucket', [{ key: 'w/a.txt', body: 'changed' }]);
        await within(10_000, () => expect(events).toContain('updated s3:///files/a.txt'), 'the update of a.txt');
        expect(events).not.toContain('list-changed');
        expect(events).toContain('updated s3:///files/');

        events.length = 0;
        await backend.client.send(new DeleteObjectCommand({ Bucket: 'watched-bucket', Key: 'w/sub/b.txt' }));
        await within(10_000, () => expect(events).toContain('list-changed'), 'a list change');
        expect(events).toContain('updated s3:///files/sub/');

        // A listener that left hears nothing more, while another one still does: the other
        // listener hearing of the new object is the signal that a scan has looked.
        const others: string[] = [];
        const stopOther = files.watch?.((change) => others.push(change.type));
        stop?.();
        events.length = 0;
        await putObjects(backend.client, 'watched-bucket', [{ key: 'w/after-stop.txt', body: 'x' }]);
        await within(10_000, () => expect(others).toContain('list-changed'), "the other listener's list change");
        stopOther?.();
        expect(events).toEqual([]);
      });

      it('offer no change feed when change detection is off', () => {
        expect(source('watched-bucket', { changeDetection: { mode: 'off' } }).watch).toBeUndefined();
      });
    });
  });
}
