import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCountingProxy } from '@mcpgw/test-helpers/counting-proxy';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { MODERN_META, mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type S3rverHandle, startS3rver } from '@mcpgw/test-helpers/s3rver';
import { validateResponseBody } from '@mcpgw/test-helpers/wire-schema';

// A large binary object read through the whole gateway, whose base64 is
// written into the response as the object arrives from S3 (s3rver, a real S3
// HTTP API on loopback). What S3 will not do on demand, break off in the
// middle of a body, comes from a loopback proxy in front of s3rver that cuts
// the connection after a given number of body bytes.

const MIB = 1024 * 1024;
const big = randomBytes(MIB + 1);
let s3: S3rverHandle;
let gateway: StartedGateway;
let proxy: CuttingProxy;

interface CuttingProxy {
  endpoint: string;
  /** Body bytes let through per GetObject response before the connection is cut; undefined: all. */
  cutAfter: number | undefined;
  /** Body bytes let through before the rest waits for `release`; undefined: none wait. */
  holdAfter: number | undefined;
  /** Resolved once the held response has sent its first `holdAfter` bytes. */
  held: Promise<void>;
  release(): void;
  close(): Promise<void>;
}

async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  let releaseHeld = () => {};
  let markHeld = () => {};
  const state = {
    cutAfter: undefined as number | undefined,
    holdAfter: undefined as number | undefined,
    held: Promise.resolve(),
    release: () => releaseHeld(),
  };
  const proxy = await startCountingProxy(target, {
    relay(incoming, response, outgoing) {
      const isGet = incoming.method === 'GET' && !incoming.url?.includes('list-type');
      const hold = isGet ? state.holdAfter : undefined;
      if (hold !== undefined) {
        const released = new Promise<void>((resolve) => (releaseHeld = resolve));
        let sent = 0;
        response.on('data', (chunk: Buffer) => {
          if (sent >= hold) return;
          const part = chunk.subarray(0, hold - sent);
          sent += part.length;
          outgoing.write(part);
          if (sent < hold) return;
          // The rest of the body waits: S3 has not sent it yet, as far as the gateway can tell.
          response.pause();
          markHeld();
          void released.then(() => {
            outgoing.write(chunk.subarray(part.length));
            response.removeAllListeners('data');
            response.pipe(outgoing);
            response.resume();
          });
        });
        return;
      }
      const cut = isGet ? state.cutAfter : undefined;
      if (cut === undefined) return response.pipe(outgoing);
      let sent = 0;
      // The socket is ended (FIN after what was written), not the response: S3's client sees a short body.
      const stop = () => {
        response.destroy();
        outgoing.socket?.end();
      };
      if (cut === 0) {
        outgoing.flushHeaders();
        return stop();
      }
      response.on('data', (chunk: Buffer) => {
        if (sent >= cut) return;
        const part = chunk.subarray(0, cut - sent);
        sent += part.length;
        outgoing.write(part);
        if (sent >= cut) stop();
      });
    },
  });
  Object.defineProperty(state, 'held', {
    get: () => new Promise<void>((resolve) => (markHeld = resolve)),
  });
  return Object.assign(state, { endpoint: proxy.endpoint, close: () => proxy.close() });
}

beforeAll(async () => {
  s3 = await startS3rver({ buckets: ['media'] });
  await s3.client.send(new PutObjectCommand({ Bucket: 'media', Key: 'big.bin', Body: big, ContentType: 'image/png' }));
  await s3.client.send(new PutObjectCommand({ Bucket: 'media', Key: 'small.bin', Body: big.subarray(0, 10) }));
  proxy = await startCuttingProxy(s3.endpoint);
  const source = (id: string, endpoint: string, extra: Record<string, unknown> = {}) => ({
    ...extra,
    id,
    type: 's3',
    endpoint,
    forcePathStyle: true,
    bucket: 'media',
    maxAttempts: 1,
    credentials: { accessKeyId: s3.credentials.accessKeyId, secretAccessKey: s3.credentials.secretAccessKey },
  });
  const dir = await mkdtemp(join(tmpdir(), 'gw-s3-stream-'));
  await writeFile(
    join(dir, 'gateway.json'),
    JSON.stringify({
      tenants: [
        { id: 'direct', anonymous: true, sources: [source('media', s3.endpoint)] },
        { id: 'cut', anonymous: true, sources: [source('media', proxy.endpoint)] },
        // Over its limit, though the object is large enough to be streamed.
        { id: 'capped', anonymous: true, sources: [source('media', s3.endpoint, { maxObjectBytes: 768 * 1024 })] },
      ],
    }),
  );
  // Not a test of load shedding: megabytes parsed in this process would read as event-loop delay.
  gateway = await startGateway({ configPath: join(dir, 'gateway.json'), env: { SHED_EVENT_LOOP_DELAY_MS: '0' } });
});

afterAll(async () => {
  await gateway?.close();
  await proxy?.close();
  await s3?.close();
});

interface ReadBody {
  id?: number;
  result?: { contents: Array<{ uri: string; mimeType?: string; blob?: string }> };
  error?: { code: number; message: string };
}

const read = (tenant: string, uri: string) =>
  mcpPost<ReadBody>(`${gateway.baseUrl}/t/${tenant}/mcp`, 'resources/read', { uri });

/** One read over a raw connection: what arrived, the announced length, and how the body ended. */
function rawRead(
  tenant: string,
  uri: string,
): Promise<{ status: number; length: number; bytes: Buffer; ended: boolean }> {
  const url = new URL(`${gateway.baseUrl}/t/${tenant}/mcp`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'resources/read',
          'mcp-name': `=?base64?${Buffer.from(uri).toString('base64')}?=`,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        const done = (ended: boolean) =>
          resolve({
            status: res.statusCode ?? 0,
            length: Number(res.headers['content-length']),
            bytes: Buffer.concat(chunks),
            ended,
          });
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(true));
        res.on('aborted', () => done(false));
        res.on('error', () => done(false));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri, _meta: MODERN_META } }));
  });
}

describe('a large binary S3 object through the gateway', () => {
  it('arrives whole, valid on the wire, with its exact Content-Length, read after read', async () => {
    // Two at once (one may join the other's flight: it reads for itself), then one more (nothing was stored).
    const answers = [
      ...(await Promise.all([read('direct', 's3:///media/big.bin'), read('direct', 's3:///media/big.bin')])),
    ];
    answers.push(await read('direct', 's3:///media/big.bin'));
    for (const { status, headers, text, body } of answers) {
      expect(status).toBe(200);
      expect(Number(headers.get('content-length'))).toBe(Buffer.byteLength(text));
      expect(validateResponseBody('2026-07-28', 'resources/read', body)).toEqual([]);
      expect(body.result?.contents).toHaveLength(1);
      expect(body.result?.contents[0]).toMatchObject({ uri: 's3:///media/big.bin', mimeType: 'image/png' });
      expect(Buffer.from(body.result?.contents[0]?.blob ?? '', 'base64').equals(big)).toBe(true);
    }
  });

  it('breaks the connection when S3 breaks off mid-body: fewer bytes than announced, never a complete document', async () => {
    proxy.cutAfter = 300_000;
    try {
      const cut = await rawRead('cut', 's3:///media/big.bin');
      expect(cut.status).toBe(200);
      expect(cut.ended).toBe(false);
      expect(cut.bytes.length).toBeLessThan(cut.length);
      expect(cut.bytes.toString('latin1')).toMatch(
        /^\{"jsonrpc":"2.0","id":4,"result":\{"resultType":"complete","contents":\[\{"uri":"s3:\/\/\/media\/big.bin","mimeType":"image\/png","blob":"[A-Za-z0-9+/]+$/,
      );
      expect(() => JSON.parse(cut.bytes.toString('utf8'))).toThrow();
      // A fetch-based client (the official SDK's transport) sees a transport error, not a result.
      await expect(read('cut', 's3:///media/big.bin')).rejects.toThrow();
    } finally {
      proxy.cutAfter = undefined;
    }
    // The gateway serves on: the next read through the same source is whole.
    const after = await read('cut', 's3:///media/big.bin');
    expect(Buffer.from(after.body.result?.contents[0]?.blob ?? '', 'base64').equals(big)).toBe(true);
  });

  it('answers with a JSON-RPC error for the request when S3 breaks off before the first body byte', async () => {
    proxy.cutAfter = 0;
    try {
      const { status, body } = await read('cut', 's3:///media/big.bin');
      expect(status).toBe(200);
      expect(body).toMatchObject({
        id: 9,
        error: { code: -32603, message: 'S3 source "media" failed while sending an object' },
      });
    } finally {
      proxy.cutAfter = undefined;
    }
  });

  it('sends the first bytes of the response while S3 has not yet sent the whole object', async () => {
    proxy.holdAfter = 512 * 1024;
    const held = proxy.held;
    try {
      const url = new URL(`${gateway.baseUrl}/t/cut/mcp`);
      const uri = 's3:///media/big.bin';
      const chunks: Buffer[] = [];
      let firstBytes!: () => void;
      const arrived = new Promise<void>((resolve) => (firstBytes = resolve));
      const ended = new Promise<void>((resolve, reject) => {
        const req = httpRequest(
          {
            hostname: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'mcp-protocol-version': '2026-07-28',
              'mcp-method': 'resources/read',
              'mcp-name': uri,
            },
          },
          (res) => {
            res.on('data', (chunk: Buffer) => {
              chunks.push(chunk);
              firstBytes();
            });
            res.on('end', resolve);
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(
          JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'resources/read', params: { uri, _meta: MODERN_META } }),
        );
      });
      await held;
      await arrived;
      // S3 has sent half of the object and waits: the client already has the start of the document.
      const early = Buffer.concat(chunks).toString('utf8');
      expect(early.startsWith('{"jsonrpc":"2.0","id":5,"result":{')).toBe(true);
      expect(early.length).toBeGreaterThan(100);
      proxy.release();
      await ended;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReadBody;
      expect(Buffer.from(body.result?.contents[0]?.blob ?? '', 'base64').equals(big)).toBe(true);
    } finally {
      proxy.holdAfter = undefined;
    }
  });

  it('refuses an object over the source limit with a JSON-RPC error that states it, streamable size or not', async () => {
    const { status, body } = await read('capped', 's3:///media/big.bin');
    expect(status).toBe(200);
    expect(body.result).toBeUndefined();
    expect(body.error?.message).toMatch(/exceeds the 768 KiB/);
  });
});
