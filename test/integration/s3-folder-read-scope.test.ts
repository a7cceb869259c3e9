import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, type ResourceContents, type Source, silentLogger } from '@mcpgw/core';
import { createCatalog } from '@mcpgw/catalog';
import { type Grant, resolveAccess } from '@mcpgw/policy';
import { createCursorCodec } from '@mcpgw/protocol';
import { createS3Source, s3SourceOptionsSchema } from '@mcpgw/source-s3';
import { type S3rverHandle, startS3rver } from '@mcpgw/test-helpers/s3rver';

// A folder read of an S3 source for a caller who may see only part of the
// folder: the real catalog, the real policy and a real S3 HTTP API (s3rver).
// What the caller may not see is never fetched (every GetObject the source
// sends is recorded) and nothing in the answer (entries, counts, the note
// about subfolders) describes it.

const CANARY = 'CANARY-hidden-content';
const signal = new AbortController().signal;
const principal: Principal = {
  issuer: 'https://idp.test',
  subject: 'alice',
  scopes: ['team'],
  groups: [],
  expiresAt: 0,
};

let s3: S3rverHandle;
let client: S3Client;
let source: Source;
/** Keys of every GetObject the source sent, in order. */
const fetchedKeys: string[] = [];

beforeAll(async () => {
  s3 = await startS3rver({ buckets: ['scoped-folders'] });
  const put = (key: string, body: string) =>
    s3.client.send(new PutObjectCommand({ Bucket: 'scoped-folders', Key: key, Body: body }));
  // Hidden objects sort before the visible ones, so a read that takes the
  // first keys of the listing and filters afterwards takes the hidden ones.
  for (const key of ['a-hidden-1.txt', 'a-hidden-2.txt', 'a-hidden-3.txt', 'secret-sub/x.txt']) {
    await put(`p/team/${key}`, `${CANARY} ${key}`);
  }
  for (const key of ['public-1.txt', 'public-2.txt', 'public-3.txt']) await put(`p/team/${key}`, `visible ${key}`);
  await put('p/vault/secret.txt', CANARY);
  await put('p/vault/deep/x.txt', CANARY);

  client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: s3.credentials,
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'GetObjectCommand') fetchedKeys.push((args.input as { Key: string }).Key);
      return next(args);
    },
    { step: 'initialize', name: 'recordGetObject' },
  );
  const options = s3SourceOptionsSchema.parse({
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
    bucket: 'scoped-folders',
    prefix: 'p/',
    folderRead: { maxObjects: 2 },
    changeDetection: { mode: 'off' },
  });
  source = createS3Source(
    options,
    { sourceId: 'docs', tenantId: 'acme', configDir: '/', logger: silentLogger },
    client,
  );
});

afterAll(async () => {
  await source?.close();
  await s3?.close();
});

function readAs(uris: string[] | undefined, uri: string): Promise<{ contents: ResourceContents[] } | undefined> {
  const grants: Grant[] = [{ name: 'team', match: { scopes: ['team'] }, allow: [{ source: 'docs', uris }] }];
  const catalog = createCatalog({
    tenantId: 'acme',
    sources: [source],
    cursors: createCursorCodec({ key: Buffer.from('s'.repeat(32)) }),
  });
  return catalog.forScope(resolveAccess('acme', principal, grants)).read(uri, signal);
}

const textOf = (entry: ResourceContents | undefined) => (entry !== undefined && 'text' in entry ? entry.text : '');

describe('an S3 folder read for a narrowly granted caller', () => {
  it('fetches, returns and counts only the objects the caller may see', async () => {
    fetchedKeys.length = 0;
    const outcome = await readAs(['s3:///docs/team/', 's3:///docs/team/public-*'], 's3:///docs/team/');
    expect(outcome?.contents.map((entry) => entry.uri)).toEqual([
      's3:///docs/team/public-1.txt',
      's3:///docs/team/public-2.txt',
      's3:///docs/team/',
    ]);
    expect(outcome?.contents.slice(0, 2).map(textOf)).toEqual(['visible public-1.txt', 'visible public-2.txt']);
    const note = textOf(outcome?.contents[2]);
    expect(note).toContain('Showing the first 2 objects directly under this folder; there are more.');
    // The only subfolder is hidden: the note must not hint at it.
    expect(note).not.toContain('subfolder');
    expect(fetchedKeys).toEqual(['p/team/public-1.txt', 'p/team/public-2.txt']);
    const answer = JSON.stringify(outcome);
    for (const hidden of ['hidden', 'secret', CANARY]) expect(answer).not.toContain(hidden);
  });

  it('says a folder whose objects are all hidden has none, without fetching any', async () => {
    fetchedKeys.length = 0;
    const outcome = await readAs(['s3:///docs/vault/'], 's3:///docs/vault/');
    expect(outcome?.contents).toEqual([
      { uri: 's3:///docs/vault/', mimeType: 'text/plain', text: 'This folder has no objects directly under it.' },
    ]);
    expect(fetchedKeys).toEqual([]);
  });

  it('still shows the same folder in full to a caller granted the whole source', async () => {
    fetchedKeys.length = 0;
    const outcome = await readAs(undefined, 's3:///docs/team/');
    expect(outcome?.contents.map((entry) => entry.uri)).toEqual([
      's3:///docs/team/a-hidden-1.txt',
      's3:///docs/team/a-hidden-2.txt',
      's3:///docs/team/',
    ]);
    expect(textOf(outcome?.contents[2])).toContain(
      'Showing the first 2 objects directly under this folder; there are more.',
    );
    expect(fetchedKeys).toEqual(['p/team/a-hidden-1.txt', 'p/team/a-hidden-2.txt']);
  });
});
