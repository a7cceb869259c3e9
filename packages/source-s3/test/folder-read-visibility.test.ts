import { silentLogger, type ResourceContents, type Source } from '@mcpgw/core';
import { afterAll, expect, it } from 'vitest';
import { createS3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';
import { answerObject, startFakeS3, type FakeS3 } from './fake-s3-server.js';

// A folder read by a caller who can see one object of a folder that seems to
// go on forever (every ListObjectsV2 page full of hidden keys, always
// truncated): the read stops listing after a fixed number of calls, fetches
// only the visible object, and says honestly that there may be more.

let server: FakeS3 | undefined;
let source: Source | undefined;
const listCalls: string[] = [];
const fetched: string[] = [];

afterAll(async () => {
  await source?.close();
  await server?.close();
});

function listPage(page: number): string {
  const keys = Array.from({ length: page === 0 ? 3 : 1000 }, (_, i) => `team/hidden-${page}-${i}.txt`);
  if (page === 0) keys.unshift('team/a-visible.txt');
  const contents = keys.map((key) => `<Contents><Key>${key}</Key><Size>1</Size><ETag>"e"</ETag></Contents>`).join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Name>bucket</Name><Prefix>team/</Prefix><Delimiter>/</Delimiter><KeyCount>${keys.length}</KeyCount>` +
    `<IsTruncated>true</IsTruncated><NextContinuationToken>page-${page + 1}</NextContinuationToken>` +
    `${contents}</ListBucketResult>`
  );
}

it('an S3 folder read that finds little the caller may see stops listing, fetches only that, and says so', async () => {
  server = await startFakeS3(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    if (url.searchParams.get('list-type') === '2') {
      const token = url.searchParams.get('continuation-token');
      listCalls.push(token ?? 'first');
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(listPage(token === null ? 0 : Number(token.slice('page-'.length))));
      return;
    }
    fetched.push(decodeURIComponent(url.pathname));
    await answerObject(response, 'v');
  });
  source = createS3Source(
    s3SourceOptionsSchema.parse({
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test-secret' },
      bucket: 'bucket',
      folderRead: { maxObjects: 3 },
      changeDetection: { mode: 'off' },
    }),
    { sourceId: 'docs', tenantId: 'acme', configDir: '/', logger: silentLogger },
  );

  const contents = await source.read(
    's3:///docs/team/',
    undefined,
    (uri) => uri === 's3:///docs/team/' || uri === 's3:///docs/team/a-visible.txt',
  );

  expect(listCalls).toEqual(['first', ...Array.from({ length: 9 }, (_, i) => `page-${i + 1}`)]);
  expect(fetched).toEqual(['/bucket/team/a-visible.txt']);
  expect(contents?.map((entry) => entry.uri)).toEqual(['s3:///docs/team/a-visible.txt', 's3:///docs/team/']);
  const note = contents?.[1] as ResourceContents & { text: string };
  expect(note.text).toContain('Showing the first 1 objects directly under this folder; there may be more.');
  expect(JSON.stringify(contents)).not.toContain('hidden');
});
