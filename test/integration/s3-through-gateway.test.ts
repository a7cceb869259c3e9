import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type S3rverHandle, startS3rver } from '@mcpgw/test-helpers/s3rver';

// Through the whole gateway: an S3 source on s3rver (a real S3 HTTP
// API on loopback), credentials from the environment via $env, reached over
// real HTTP on the tenant endpoint, listed and read on the 2026-07-28 wire.

// Larger than one 48 KiB piece of the streamed base64, and not a multiple of 3.
const binary = randomBytes(200_001);
let s3: S3rverHandle;
let gateway: StartedGateway;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: ['reports'] });
  await s3.client.send(
    new PutObjectCommand({
      Bucket: 'reports',
      Key: 'published/q3 summary.md',
      Body: '# Q3\nRevenue grew.',
      ContentType: 'text/markdown',
    }),
  );
  await s3.client.send(
    new PutObjectCommand({ Bucket: 'reports', Key: 'published/charts/q3.png', Body: binary, ContentType: 'image/png' }),
  );
  await s3.client.send(new PutObjectCommand({ Bucket: 'reports', Key: 'drafts/secret.md', Body: 'not published' }));
  const config = {
    tenants: [
      {
        id: 'acme',
        anonymous: true,
        sources: [
          {
            id: 'reports',
            type: 's3',
            endpoint: s3.endpoint,
            forcePathStyle: true,
            bucket: 'reports',
            prefix: 'published/',
            credentials: { accessKeyId: { $env: 'S3_KEY_ID' }, secretAccessKey: { $env: 'S3_SECRET' } },
          },
        ],
      },
    ],
  };
  const dir = await mkdtemp(join(tmpdir(), 'gw-s3-'));
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  gateway = await startGateway({
    configPath: join(dir, 'gateway.json'),
    env: { S3_KEY_ID: s3.credentials.accessKeyId, S3_SECRET: s3.credentials.secretAccessKey },
  });
});

afterAll(async () => {
  await gateway?.close();
  await s3?.close();
});

interface ResponseBody {
  result: { resources: Array<{ uri: string }>; contents: Array<{ uri: string; text?: string; blob?: string }> };
  error?: { code: number; data?: unknown };
}

const call = (method: string, params: Record<string, unknown> = {}) =>
  mcpPost<ResponseBody>(`${gateway.baseUrl}/t/acme/mcp`, method, params);

describe('an S3 source behind the gateway', () => {
  it('lists the objects and folders under the prefix only, without bucket or endpoint in any URI', async () => {
    const { body, text } = await call('resources/list');
    const uris = body.result.resources.map((r) => r.uri);
    expect(uris).toEqual(['s3:///reports/charts/', 's3:///reports/charts/q3.png', 's3:///reports/q3%20summary.md']);
    expect(text).not.toContain(s3.endpoint);
    expect(text).not.toContain('drafts');
  });

  it('reads text as text and binary bytes unchanged', async () => {
    const markdown = await call('resources/read', { uri: 's3:///reports/q3%20summary.md' });
    expect(markdown.body.result.contents).toEqual([
      expect.objectContaining({
        uri: 's3:///reports/q3%20summary.md',
        mimeType: 'text/markdown',
        text: '# Q3\nRevenue grew.',
      }),
    ]);
    const png = await call('resources/read', { uri: 's3:///reports/charts/q3.png' });
    expect(Buffer.from(png.body.result.contents[0]?.blob ?? '', 'base64').equals(binary)).toBe(true);
  });

  it('answers keys outside the prefix and traversal as not found', async () => {
    for (const uri of [
      's3:///reports/../drafts/secret.md',
      's3:///reports/%2E%2E/drafts/secret.md',
      's3:///reports/nope.md',
    ]) {
      const { body, text } = await call('resources/read', { uri });
      expect(body.error, uri).toMatchObject({ code: -32602, data: { uri } });
      expect(text).not.toContain('not published');
    }
  });
});
