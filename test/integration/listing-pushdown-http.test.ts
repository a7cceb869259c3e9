import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Resource } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCountingProxy, type CountingProxy } from '@mcpgw/test-helpers/counting-proxy';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { startS3rver, type S3rverHandle } from '@mcpgw/test-helpers/s3rver';

// Through the running gateway: the official MCP client, holding a
// real token granted one level of one folder and one object of an S3 bucket,
// lists over HTTP; the S3 backend (behind a counting proxy) is asked for
// those two prefixes only, never for the rest of the bucket.

const BUCKET = 'lake';
const TENANT = 'acme';
const FINANCE = Array.from({ length: 5 }, (_, i) => `finance/q${i + 1}.csv`);

let s3: S3rverHandle;
let proxy: CountingProxy;
let idp: LocalIssuer;
let gateway: StartedGateway;
let dir: string;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: [BUCKET] });
  const keys = [
    ...FINANCE,
    ...Array.from({ length: 30 }, (_, i) => `finance/archive/old-${i}.csv`),
    ...Array.from({ length: 150 }, (_, i) => `hr/person-${String(i).padStart(3, '0')}.json`),
    'ops/readme.md',
    'ops/readme.md.bak',
    'ops/runbook.md',
  ];
  for (const key of keys) await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: key }));
  proxy = await startCountingProxy(s3.endpoint);
  idp = await startLocalIssuer({ path: '/idp-pushdown' });
  const config = {
    tenants: [
      {
        id: TENANT,
        auth: { issuers: [{ issuer: idp.issuer, jwksUri: idp.jwksUri, groupsClaim: 'groups' }] },
        grants: [
          {
            name: 'finance',
            match: { groups: ['finance'] },
            allow: [{ source: BUCKET, uris: ['s3:///lake/finance/*', 's3:///lake/ops/readme.md'] }],
          },
          { name: 'staff', match: { groups: ['staff'] }, allow: [{ source: BUCKET }] },
        ],
        sources: [
          {
            id: BUCKET,
            type: 's3',
            endpoint: proxy.endpoint,
            forcePathStyle: true,
            bucket: BUCKET,
            credentials: { accessKeyId: { $env: 'S3_KEY_ID' }, secretAccessKey: { $env: 'S3_SECRET' } },
            // The change poller scans the whole bucket on its own schedule, whoever lists: off,
            // so every ListObjectsV2 the proxy sees is a listing's.
            changeDetection: { mode: 'off' },
          },
        ],
      },
    ],
  };
  dir = await mkdtemp(join(tmpdir(), 'gw-pushdown-'));
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  gateway = await startGateway({
    configPath: join(dir, 'gateway.json'),
    env: { S3_KEY_ID: s3.credentials.accessKeyId, S3_SECRET: s3.credentials.secretAccessKey },
  });
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await idp?.close();
  await proxy?.close();
  await s3?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Every resource the official client lists (following cursors), and the pages it took. */
async function listWithClient(groups: string[]): Promise<{ uris: string[]; pages: number }> {
  const url = new URL(`/t/${TENANT}/mcp`, gateway.baseUrl);
  const token = await idp.token({ aud: url.href, scope: 'mcp:read', groups });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client(
    { name: 'pushdown-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(transport);
  try {
    const resources: Resource[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      resources.push(...page.resources);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined && pages < 50);
    return { uris: resources.map((r) => r.uri), pages };
  } finally {
    await client.close();
  }
}

/** The `prefix` query parameter of each ListObjectsV2 call since `from`. */
function listedPrefixes(from: number): string[] {
  return proxy.requests
    .slice(from)
    .filter((r) => r.startsWith('GET ') && r.includes('list-type=2'))
    .map((r) => new URL(r.slice('GET '.length), 'http://s3').searchParams.get('prefix') ?? '');
}

describe('a narrowly granted caller listing through the gateway', () => {
  it('gets its resources in one response while S3 is asked for the granted prefixes only', async () => {
    const before = proxy.requests.length;
    const { uris, pages } = await listWithClient(['finance']);
    expect(uris).toEqual([
      's3:///lake/finance/',
      ...FINANCE.map((key) => `s3:///lake/${key}`),
      's3:///lake/ops/readme.md',
    ]);
    expect(pages).toBe(1);
    // One level of finance/ (with the delimiter, not its archive) and the one key: two calls in all.
    expect([...new Set(listedPrefixes(before))].sort()).toEqual(['finance/', 'ops/readme.md']);
    expect(listedPrefixes(before)).toHaveLength(2);
  });

  it('walks the bucket from its start for a caller granted all of it (the check can fail)', async () => {
    const before = proxy.requests.length;
    const { uris } = await listWithClient(['staff']);
    expect(uris).toContain('s3:///lake/hr/person-000.json');
    expect(listedPrefixes(before)).toContain('');
  });
});
