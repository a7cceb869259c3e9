/**
 * Starts a local S3 HTTP API (s3rver 3.7.1) for tests and benchmarks.
 *
 * s3rver runs as a CHILD PROCESS under `node --openssl-legacy-provider`: its
 * ListObjectsV2 continuation tokens use a cipher OpenSSL 3 refuses
 * (ERR_OSSL_EVP_UNSUPPORTED, HTTP 500 on the second page), and
 * the flag cannot be turned on inside the test runner's own process.
 *
 * It listens on a random loopback port with a fresh temporary directory that
 * `close()` removes. Only ever kills the process it started.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
// By package name: benchmarks load this file on Node's type stripping.
import { within } from '@mcpgw/test-helpers/within';

/** s3rver's built-in account; it refuses signatures made with other keys. */
export const S3RVER_CREDENTIALS = Object.freeze({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' });

export interface S3rverHandle {
  /** `http://127.0.0.1:<port>`; use path-style addressing. */
  readonly endpoint: string;
  readonly credentials: { accessKeyId: string; secretAccessKey: string };
  /** A client for seeding data (path-style, s3rver credentials). */
  readonly client: S3Client;
  createBucket(name: string): Promise<void>;
  /** Stops the child process (SIGTERM, then SIGKILL after 5 s) and removes its directory. */
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;

export async function startS3rver(options: { buckets?: string[] } = {}): Promise<S3rverHandle> {
  const directory = await mkdtemp(join(tmpdir(), 's3rver-'));
  const bin = createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js');
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', bin, '--directory', directory, '--address', '127.0.0.1', '--port', '0', '--silent'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  let output = '';
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`s3rver did not start within ${START_TIMEOUT_MS} ms; output: ${output}`)),
        START_TIMEOUT_MS,
      );
      const onData = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        // bin/s3rver.js prints "S3rver listening on <address>:<port>" once bound.
        const match = /listening on [^\s:]+:(\d+)/.exec(output);
        if (match?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited with code ${code} before listening; output: ${output}`));
      });
    });
  } catch (error) {
    child.kill('SIGKILL');
    await rm(directory, { recursive: true, force: true });
    throw error;
  }

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    // A copy: the SDK writes bookkeeping fields (`$source`) into the object it is given.
    credentials: { ...S3RVER_CREDENTIALS },
  });

  const close = async (): Promise<void> => {
    client.destroy();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(directory, { recursive: true, force: true });
  };

  try {
    await waitUntilAnswering(endpoint);
    for (const name of options.buckets ?? []) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    }
  } catch (error) {
    await close();
    throw error;
  }

  return {
    endpoint,
    credentials: { ...S3RVER_CREDENTIALS },
    client,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    close,
  };
}

/** Polls until the server answers an HTTP request (any status), for at most START_TIMEOUT_MS. */
async function waitUntilAnswering(endpoint: string): Promise<void> {
  await within(
    START_TIMEOUT_MS,
    async () => {
      const response = await fetch(endpoint, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
    },
    `s3rver answering at ${endpoint}`,
  );
}
