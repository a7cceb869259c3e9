import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { NO_SHEDDING_ENV } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type S3rverHandle, startS3rver } from '@mcpgw/test-helpers/s3rver';
import { within } from '@mcpgw/test-helpers/within';

// What an operator's log shipper sees: the built gateway (`node
// apps/gateway/dist/main.js`, as `npm start` and the container run it), with
// an S3 source, writes nothing but JSON lines on stdout and stderr while it
// starts, serves a request and shuts down. On Node < 22 the AWS SDK can emit a
// multi-line NodeVersionSupportWarning about its future releases: off by
// default (the installed release is pinned and supports Node 20), and when an
// operator turns it back on it arrives as a JSON log line, not as Node's plain
// text on stderr.

const MAIN = fileURLToPath(new URL('../../apps/gateway/dist/main.js', import.meta.url));

/**
 * Every Node this run can reach: the one running the tests and the one npm
 * itself runs on (`npm_node_execpath`). They differ here: npm scripts put
 * node_modules/.bin first on PATH, where a devDependency provides Node 22,
 * while an operator's shell (and `node apps/gateway/dist/main.js`) runs the
 * system Node.
 */
const runtimes = [...new Set([process.execPath, process.env.npm_node_execpath].filter((path) => path !== undefined))]
  .filter((path) => existsSync(path))
  .map((path) => ({ path, version: execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim() }));

let s3: S3rverHandle;
let configPath: string;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: ['process-output'] });
  await s3.client.send(new PutObjectCommand({ Bucket: 'process-output', Key: 'notes/a.txt', Body: 'hello' }));
  const dir = await mkdtemp(join(tmpdir(), 'gw-output-'));
  configPath = join(dir, 'gateway.json');
  await writeFile(
    configPath,
    JSON.stringify({
      tenants: [
        {
          id: 'acme',
          anonymous: true,
          sources: [
            {
              id: 'notes',
              type: 's3',
              endpoint: s3.endpoint,
              forcePathStyle: true,
              bucket: 'process-output',
              prefix: 'notes/',
              credentials: { accessKeyId: { $env: 'S3_KEY_ID' }, secretAccessKey: { $env: 'S3_SECRET' } },
            },
          ],
        },
      ],
    }),
  );
});

afterAll(async () => {
  await s3?.close();
});

/** Every line of a stream's output, each parsed as JSON; fails naming the first line that is not. */
function jsonLines(name: string, output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`${name} has a line that is not JSON: ${JSON.stringify(line)}\n--- all of ${name}:\n${output}`);
      }
    });
}

/** Each runtime as started by default, and with the AWS SDK's notice turned back on by the operator. */
const runs = runtimes.flatMap((runtime) => [
  { ...runtime, sdkNotice: 'default' as const },
  { ...runtime, sdkNotice: 'turned on' as const },
]);

describe('the gateway process output', () => {
  it.each(runs)(
    'is JSON lines only, on stdout and stderr, through start, a request and shutdown (Node $version, SDK notice $sdkNotice)',
    async ({ path, version, sdkNotice }) => {
      if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
      const port = await freePort();
      const child = spawn(path, [MAIN], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          PORT: String(port),
          DATA_DIR: await mkdtemp(join(tmpdir(), 'gw-output-data-')),
          GATEWAY_CONFIG: configPath,
          S3_KEY_ID: s3.credentials.accessKeyId,
          S3_SECRET: s3.credentials.secretAccessKey,
          ...(sdkNotice === 'turned on' ? { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'false' } : {}),
          ...NO_SHEDDING_ENV,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      try {
        await within(90_000, () => expect(stdout).toContain('gateway listening'), 'the gateway listening');
        const read = await mcpPost<{ result: { contents: Array<{ text?: string }> } }>(
          `http://127.0.0.1:${port}/t/acme/mcp`,
          'resources/read',
          { uri: 's3:///notes/a.txt' },
        );
        expect(read.body.result.contents[0]?.text).toBe('hello');
        // Its access line is out while the process runs on: lines are batched per event-loop turn, never held.
        await within(10_000, () => expect(stdout).toContain('"mcpMethod":"resources/read"'), 'the access line');
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exited).toBe(0);

      const lines = [...jsonLines('stdout', stdout), ...jsonLines('stderr', stderr)];
      expect(lines.some((line) => line.msg === 'shutting down: finishing in-flight requests')).toBe(true);
      const warnings = lines.filter((line) => JSON.stringify(line).includes('NodeVersionSupportWarning'));
      if (sdkNotice === 'turned on' && Number(version.split('.')[0]) < 22) {
        // Reported once, as a log line an operator can act on.
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatchObject({ level: 40, msg: 'process warning' });
      } else {
        // Node 20 is supported: by default nothing warns, at start or at the S3 client's first use.
        expect(lines.filter((line) => line.msg === 'process warning')).toEqual([]);
      }
    },
    120_000,
  );
});
