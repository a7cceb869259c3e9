import { createEgressGuard, isGatewayError, silentLogger, type EgressGuard, type Source } from '@mcpgw/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createS3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';
import { answerObject, startFakeS3, type FakeS3 } from './fake-s3-server.js';

// A source a tenant admin configured gets an egress guard in its context; its
// S3 client then connects only where the guard allows, checked on the
// resolved address (docs/configuration.md, "Egress policy").

let backend: FakeS3;
const sources: Source[] = [];

beforeAll(async () => {
  backend = await startFakeS3(async (request, response) => {
    if (request.method === 'HEAD') {
      response.writeHead(200).end();
      return;
    }
    await answerObject(response, 'internal secret');
  });
});
afterEach(async () => {
  await Promise.all(sources.splice(0).map((source) => source.close()));
});
afterAll(async () => {
  await backend.close();
});

function source(endpoint: string, egress: EgressGuard | undefined): Source {
  const created = createS3Source(
    s3SourceOptionsSchema.parse({
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test-secret' },
      bucket: 'bucket',
      maxAttempts: 1,
      changeDetection: { mode: 'off' },
    }),
    { sourceId: 'docs', tenantId: 'acme', configDir: '/', logger: silentLogger, ...(egress ? { egress } : {}) },
  );
  sources.push(created);
  return created;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

const port = () => new URL(backend.endpoint).port;

describe('an S3 source under the egress guard', () => {
  it.each([
    ['a loopback literal', () => `http://127.0.0.1:${port()}`, '127.0.0.1'],
    ['a name resolving to loopback', () => `http://localhost:${port()}`, 'localhost ('],
    ['loopback in decimal notation', () => `http://2130706433:${port()}`, '127.0.0.1'],
    ['IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${port()}`, 'loopback'],
  ])('refuses %s at connect time: nothing reaches the server', async (_name, endpoint, named) => {
    const before = backend.requests;
    const refused = source(endpoint(), createEgressGuard());

    const health = await refused.health();
    expect(health.ok).toBe(false);
    expect(health.detail).toContain('refused by the egress policy');
    expect(health.detail).toContain(named);
    expect(health.detail).toContain('EGRESS_ALLOW');

    const read = await failure(refused.read('s3:///docs/a.txt'));
    expect(isGatewayError(read) && read.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(read.message).toBe(`S3 source "docs" is unavailable: the gateway's egress policy refuses its endpoint`);
    const listing = await failure(refused.listResources({ limit: 10 }));
    expect(isGatewayError(listing) && listing.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(backend.requests).toBe(before);
  });

  it('connects where the operator allowlist says, and the same source unguarded (an operator’s) always does', async () => {
    const before = backend.requests;
    const allowed = source(`http://127.0.0.1:${port()}`, createEgressGuard({ allow: ['127.0.0.0/8'] }));
    expect(await allowed.health()).toEqual({ ok: true });
    const contents = await allowed.read('s3:///docs/a.txt');
    expect(contents?.[0]).toMatchObject({ text: 'internal secret' });
    const operators = source(`http://localhost:${port()}`, undefined);
    expect(await operators.health()).toEqual({ ok: true });
    expect(backend.requests).toBe(before + 3);
  });
});
