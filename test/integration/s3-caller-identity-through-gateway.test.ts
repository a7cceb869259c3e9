import { PutObjectCommand } from '@aws-sdk/client-s3';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTenantToken } from '@mcpgw/gateway/testing';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { type StartedGateway, startGateway } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';
import { type S3rverHandle, startS3rver } from '@mcpgw/test-helpers/s3rver';
import { startSessionCheckingS3, type SessionCheckingS3 } from '../../packages/source-s3/test/session-checking-s3.js';
import { startStsStandIn, type StsStandIn } from '../../packages/source-s3/test/sts-stand-in.js';

// S3 caller identity through the whole gateway (packages/source-s3 README,
// "Caller identity"): the gateway signs each caller's identity token with
// the key of the tenant's hosted authorization server, STS (a loopback
// stand-in for AWS STS, which cannot run in a test) verifies it against the
// JWKS it fetches from the gateway, as STS fetches a registered OIDC
// provider's keys, and the read reaches the bucket (s3rver behind a front
// that checks every SigV4 signature) signed with the session STS issued.

const ROLE = 'arn:aws:iam::123456789012:role/reports-readers';
/** The source's own key: what S3 must not see for a caller's read. */
const SERVICE = { accessKeyId: 'SERVICEKEY', secretAccessKey: 'service-secret' };
const SCOPE = 'mcp:read';

let s3: S3rverHandle;
let sts: StsStandIn;
let front: SessionCheckingS3;
let gateway: StartedGateway;
let base: string;

beforeAll(async () => {
  s3 = await startS3rver({ buckets: ['reports'] });
  await s3.client.send(
    new PutObjectCommand({
      Bucket: 'reports',
      Key: 'q3.md',
      Body: '# Q3\nRevenue grew.',
      ContentType: 'text/markdown',
    }),
  );
  // The tenant's issuer and JWKS are on the gateway's URL, which STS is told of before the gateway starts.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  sts = await startStsStandIn({
    issuer: `${base}/t/acme/oauth`,
    jwks: new URL(`${base}/t/acme/oauth/jwks`),
    now: Date.now,
    // The role's trust policy: acme's callers only.
    trust: { [ROLE]: (claims) => String(claims.sub).startsWith('tenant:acme:') },
  });
  front = await startSessionCheckingS3({
    target: s3.endpoint,
    sessions: sts.issued,
    service: SERVICE,
    now: Date.now,
    allow: (session) => session.roleArn === ROLE,
  });
  gateway = await startGateway({
    env: { PORT: String(port), PUBLIC_URL: base },
    bootstrap: {
      configDir: '.',
      document: {
        tenants: [
          {
            id: 'acme',
            auth: { issuers: [{ development: true }], requiredScopes: [SCOPE] },
            grants: [{ name: 'readers', match: { scopes: [SCOPE] }, allow: [{ source: 'reports' }] }],
            sources: [
              {
                id: 'reports',
                type: 's3',
                endpoint: front.endpoint,
                forcePathStyle: true,
                bucket: 'reports',
                credentials: SERVICE,
                maxAttempts: 1,
                changeDetection: { mode: 'off' },
                callerIdentity: { roleArns: [ROLE], stsEndpoint: sts.endpoint, default: { roleArn: ROLE } },
              },
            ],
          },
        ],
      },
    },
  });
  expect(gateway.baseUrl).toBe(base);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await front?.close();
  await sts?.close();
  await s3?.close();
});

interface ReadBody {
  result?: { contents: Array<{ uri: string; text?: string }> };
  error?: { code: number; message: string; data?: unknown };
}

describe('an S3 source with callerIdentity behind the gateway', () => {
  it("reads with the caller's own STS session, got with an identity token the tenant's hosted issuer signed", async () => {
    const { token } = await mintTenantToken(gateway.config, { tenant: 'acme', sub: 'alice' });
    const seenBefore = front.seen.length;
    const callsBefore = sts.calls.length;

    const read = await mcpPost<ReadBody>(
      `${base}/t/acme/mcp`,
      'resources/read',
      { uri: 's3:///reports/q3.md' },
      { authorization: `Bearer ${token}` },
    );

    expect(read.body.error).toBeUndefined();
    expect(read.body.result?.contents).toEqual([
      expect.objectContaining({ uri: 's3:///reports/q3.md', text: '# Q3\nRevenue grew.' }),
    ]);

    // STS verified the token against the JWKS the gateway publishes, and granted the role.
    const metadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server/t/acme/oauth`)).json()) as {
      issuer: string;
    };
    const calls = sts.calls.slice(callsBefore);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ roleArn: ROLE, answer: 'granted' });
    expect(calls[0]?.claims).toMatchObject({
      iss: metadata.issuer,
      sub: 'tenant:acme:alice',
      aud: 'sts.amazonaws.com',
    });
    expect(metadata.issuer).toBe(`${base}/t/acme/oauth`);
    const identityToken = calls[0]?.form.find(([name]) => name === 'WebIdentityToken')?.[1] ?? '';
    const published = (await (await fetch(`${base}/t/acme/oauth/jwks`)).json()) as { keys: Array<{ kid: string }> };
    expect(published.keys.map((key) => key.kid)).toContain(decodeProtectedHeader(identityToken).kid);

    // S3 saw the session's access key for the object, never the source's own.
    const session = [...sts.issued.values()].find((issued) => issued.subject === 'tenant:acme:alice');
    expect(session).toBeDefined();
    const keysForObject = front.seen
      .slice(seenBefore)
      .filter((request) => request.key === 'q3.md')
      .map((request) => request.accessKeyId);
    expect(keysForObject.length).toBeGreaterThan(0);
    expect(new Set(keysForObject)).toEqual(new Set([session?.accessKeyId]));
    expect(keysForObject).not.toContain(SERVICE.accessKeyId);
  });
});
