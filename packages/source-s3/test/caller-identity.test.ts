import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { isGatewayError, silentLogger, sourceFailureReason, type Principal, type ResourceContents } from '@mcpgw/core';
import { startS3rver, type S3rverHandle } from '@mcpgw/test-helpers/s3rver';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createIdentityTokenMinter } from '../src/identity-token.js';
import { createS3Source, type S3Source } from '../src/s3-source.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';
import { putObjects } from './s3-source-behaviour.js';
import { startSessionCheckingS3, type SessionCheckingS3 } from './session-checking-s3.js';
import { startStsStandIn, type StsStandIn } from './sts-stand-in.js';

// callerIdentity end to end at the source: the gateway mints each caller an
// identity token with the tenant's key, STS (a loopback stand-in for AWS
// STS, `sts-stand-in.ts`, which verifies that token against the tenant's
// JWKS) issues a role session, and each caller's requests reach the bucket
// (s3rver behind `session-checking-s3.ts`, which verifies every SigV4
// signature and whose access key made it) signed with their own session.

const FINANCE = 'arn:aws:iam::123456789012:role/reports-finance';
const TEAM = 'arn:aws:iam::123456789012:role/reports-team';
const UNTRUSTED = 'arn:aws:iam::123456789012:role/reports-untrusted';
const SERVICE = { accessKeyId: 'SERVICEKEY', secretAccessKey: 'service-secret' };
const ISSUER = 'https://gateway.test/t/acme/oauth';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const privateJwk = privateKey.export({ format: 'jwk' }) as JsonWebKey;
const jwks = {
  keys: [{ ...(publicKey.export({ format: 'jwk' }) as object), kid: 'acme-1', alg: 'ES256', use: 'sig' }],
};

/** The test's clock, for the identity token, STS, the S3 front and the credential cache alike. */
let nowMs = Date.UTC(2026, 0, 5, 9);
const now = () => nowMs;
const mintIdentityToken = createIdentityTokenMinter({
  signingKey: () => ({ privateJwk, kid: 'acme-1' }),
  issuer: (tenantId) => `https://gateway.test/t/${tenantId}/oauth`,
  now,
});

let s3: S3rverHandle;
let sts: StsStandIn;
let front: SessionCheckingS3;
const sources: S3Source[] = [];

beforeAll(async () => {
  s3 = await startS3rver({ buckets: ['reports'] });
  await putObjects(s3.client, 'reports', [
    { key: 'finance/q1.txt', body: 'finance numbers', contentType: 'text/plain' },
    { key: 'team-a/plan.txt', body: 'plan of team a', contentType: 'text/plain' },
    { key: 'team-b/plan.txt', body: 'plan of team b', contentType: 'text/plain' },
  ]);
  sts = await startStsStandIn({
    issuer: ISSUER,
    jwks,
    now,
    // Trust policies: the tenant's callers only (the condition on `sub` an operator writes).
    trust: {
      [FINANCE]: (claims) => String(claims.sub).startsWith('tenant:acme:'),
      [TEAM]: (claims) => String(claims.sub).startsWith('tenant:acme:'),
      [UNTRUSTED]: () => false,
    },
  });
  front = await startSessionCheckingS3({
    target: s3.endpoint,
    sessions: sts.issued,
    service: SERVICE,
    now,
    // The role policies: finance reads finance/; the team role reads the prefix its `team` tag names.
    allow: (session, key) =>
      session.roleArn === FINANCE ? key.startsWith('finance/') : key.startsWith(`team-${session.tags.team}/`),
  });
}, 60_000);
afterEach(async () => {
  await Promise.all(sources.splice(0).map((source) => source.close()));
  sts.failFor.clear();
});
afterAll(async () => {
  await front?.close();
  await sts?.close();
  await s3?.close();
});

function source(callerIdentity: Record<string, unknown> = {}): S3Source {
  const options = s3SourceOptionsSchema.parse({
    endpoint: front.endpoint,
    forcePathStyle: true,
    bucket: 'reports',
    credentials: SERVICE,
    maxAttempts: 1,
    changeDetection: { mode: 'off' },
    callerIdentity: {
      roleArns: [FINANCE, TEAM, UNTRUSTED],
      mapping: [
        { match: { groups: ['finance'] }, roleArn: FINANCE },
        { match: { groups: ['blocked'] }, roleArn: UNTRUSTED },
        { match: { scopes: ['team'] }, roleArn: TEAM },
      ],
      sessionTags: { team: 'groups', tenant: 'tenant' },
      stsEndpoint: sts.endpoint,
      durationSeconds: 900,
      ...callerIdentity,
    },
  });
  const created = createS3Source(
    options,
    { sourceId: 'reports', tenantId: 'acme', configDir: '/', logger: silentLogger },
    undefined,
    { mintIdentityToken, now },
  );
  sources.push(created);
  return created;
}

function caller(subject: string, claims: { groups?: string[]; scopes?: string[] } = {}): Principal {
  return {
    issuer: 'https://idp.example',
    subject,
    scopes: claims.scopes ?? [],
    groups: claims.groups ?? [],
    expiresAt: nowMs / 1000 + 3600,
  };
}

const read = (from: S3Source, principal: Principal, key: string) =>
  from.read(`s3:///reports/${key}`, undefined, undefined, { principal });
const list = (from: S3Source, principal: Principal, prefixes?: string[]) =>
  from.listResources({ limit: 50, ...(prefixes === undefined ? {} : { prefixes }), caller: { principal } });
const text = (contents: ResourceContents[] | undefined) => (contents?.[0] as { text?: string } | undefined)?.text;

/** The access keys S3 saw for requests about `key` since `from` (an index into front.seen). */
const keysSeen = (from: number, key?: string) =>
  front.seen.slice(from).flatMap((request) => (key === undefined || request.key === key ? [request.accessKeyId] : []));

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

describe('callerIdentity: each caller reads with credentials of their own', () => {
  it("signs each caller's requests with their own role session, never the source's credential", async () => {
    const reports = source();
    const seenFrom = front.seen.length;
    const callsFrom = sts.calls.length;
    const alice = caller('alice', { groups: ['finance'] });
    const bob = caller('bob', { groups: ['a'], scopes: ['team'] });

    expect(text(await read(reports, alice, 'finance/q1.txt'))).toBe('finance numbers');
    expect(text(await read(reports, bob, 'team-a/plan.txt'))).toBe('plan of team a');

    const aliceKey = keysSeen(seenFrom, 'finance/q1.txt');
    const bobKey = keysSeen(seenFrom, 'team-a/plan.txt');
    expect(aliceKey).toHaveLength(1);
    expect(bobKey).toHaveLength(1);
    expect(aliceKey[0]).not.toBe(bobKey[0]);
    expect(keysSeen(seenFrom)).not.toContain(SERVICE.accessKeyId);
    // The role each key belongs to is the one the mapping chose for its caller.
    expect(sts.issued.get(aliceKey[0]!)).toMatchObject({ roleArn: FINANCE, roleSessionName: 'alice' });
    expect(sts.issued.get(bobKey[0]!)).toMatchObject({ roleArn: TEAM, roleSessionName: 'bob', tags: { team: 'a' } });
    expect(sts.calls.slice(callsFrom).map((call) => [call.roleArn, call.answer])).toEqual([
      [FINANCE, 'granted'],
      [TEAM, 'granted'],
    ]);
  });

  it("presents an identity token of the tenant's issuer naming tenant and caller, with the session tags in AWS's claim", async () => {
    const reports = source();
    const callsFrom = sts.calls.length;
    await read(reports, caller('bob', { groups: ['a'], scopes: ['team'] }), 'team-a/plan.txt');
    const [call] = sts.calls.slice(callsFrom);
    expect(call?.answer).toBe('granted');
    expect(call?.claims).toMatchObject({
      iss: ISSUER,
      sub: 'tenant:acme:bob',
      aud: 'sts.amazonaws.com',
      'https://aws.amazon.com/tags': {
        principal_tags: { team: ['a'], tenant: ['acme'] },
        transitive_tag_keys: ['team', 'tenant'],
      },
    });
    expect((call!.claims!.exp as number) - (call!.claims!.iat as number)).toBe(300);
    expect(call?.form.map(([name]) => name)).toEqual([
      'Action',
      'Version',
      'RoleArn',
      'RoleSessionName',
      'WebIdentityToken',
      'DurationSeconds',
    ]);
    expect(call?.durationSeconds).toBe(900);
  });

  it("keeps each caller to what their role's tags reach: another team's object is not found, their listing is theirs", async () => {
    const reports = source();
    const bob = caller('bob', { groups: ['a'], scopes: ['team'] });
    const seenFrom = front.seen.length;
    expect(await read(reports, bob, 'team-b/plan.txt')).toBeUndefined();
    expect(front.seen.slice(seenFrom).map((request) => [request.key, request.status])).toEqual([
      ['team-b/plan.txt', 403],
    ]);
    const page = await list(reports, bob, ['s3:///reports/team-a/']);
    expect(page.items.map((item) => item.uri)).toEqual(['s3:///reports/team-a/', 's3:///reports/team-a/plan.txt']);
    // A listing the role may not make at all is empty for this caller, not another caller's.
    expect((await list(reports, bob)).items).toEqual([]);
  });

  it('shares one STS call and one session among concurrent callers of the same role and tags, and keys caches by it', async () => {
    const reports = source();
    const callsFrom = sts.calls.length;
    const bob = caller('bob', { groups: ['a'], scopes: ['team'] });
    const carol = caller('carol', { groups: ['a'], scopes: ['team', 'extra'] });
    const dan = caller('dan', { groups: ['b'], scopes: ['team'] });
    const results = await Promise.all([
      read(reports, bob, 'team-a/plan.txt'),
      read(reports, carol, 'team-a/plan.txt'),
      read(reports, bob, 'team-a/plan.txt'),
    ]);
    expect(results.map(text)).toEqual(['plan of team a', 'plan of team a', 'plan of team a']);
    expect(sts.calls.length - callsFrom).toBe(1);
    expect(reports.backendIdentityKey(bob)).toBe(reports.backendIdentityKey(carol));
    expect(reports.backendIdentityKey(dan)).not.toBe(reports.backendIdentityKey(bob));
    expect(reports.backendIdentityKey(caller('alice', { groups: ['finance'] }))).not.toBe(
      reports.backendIdentityKey(bob),
    );
    expect(reports.backendIdentityShown(bob)).toEqual({
      roleArn: TEAM,
      roleSessionName: 'bob',
      sessionTags: { team: 'a', tenant: 'acme' },
    });
  });

  it('uses a session until five minutes before it expires, then fetches a new one (injected clock)', async () => {
    const reports = source();
    const bob = caller('bob', { groups: ['a'], scopes: ['team'] });
    const callsFrom = sts.calls.length;
    const seenFrom = front.seen.length;
    await read(reports, bob, 'team-a/plan.txt');
    nowMs += 9 * 60_000; // 9 of 15 minutes: still more than 5 left
    await read(reports, bob, 'team-a/plan.txt');
    expect(sts.calls.length - callsFrom).toBe(1);
    nowMs += 60_000 + 1; // inside the last 5 minutes
    expect(text(await read(reports, bob, 'team-a/plan.txt'))).toBe('plan of team a');
    expect(sts.calls.length - callsFrom).toBe(2);
    const keys = keysSeen(seenFrom, 'team-a/plan.txt');
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
    nowMs += 15 * 60_000; // the second session is past its expiry too: a third, never an expired one
    expect(text(await read(reports, bob, 'team-a/plan.txt'))).toBe('plan of team a');
    expect(front.seen.slice(seenFrom).map((request) => request.status)).toEqual([200, 200, 200, 200]);
  });

  it('answers an STS failure as the source unavailable for that caller only, with no fallback to the service credential', async () => {
    const reports = source();
    const seenFrom = front.seen.length;
    const alice = caller('alice', { groups: ['finance'] });
    const mallory = caller('mallory', { groups: ['finance', 'audit'] });
    sts.failFor.set('mallory', { code: 'IDPCommunicationError', status: 400 });
    const [refused, fine] = await Promise.allSettled([
      read(reports, mallory, 'finance/q1.txt'),
      read(reports, alice, 'finance/q1.txt'),
    ]);
    expect(fine.status === 'fulfilled' && text(fine.value)).toBe('finance numbers');
    const error = refused.status === 'rejected' ? (refused.reason as Error) : undefined;
    expect(isGatewayError(error) && error.code).toBe('MCPGW_SOURCE_UNAVAILABLE');
    expect(error?.message).toBe(
      `S3 source "reports" is unavailable for this caller: STS could not fetch the tenant's signing keys (IDPCommunicationError); the gateway's log has the details`,
    );
    // The listing fails for them too (the catalog reports the source unavailable to this caller).
    expect(isGatewayError(await failure(list(reports, mallory, ['s3:///reports/finance/'])))).toBe(true);
    // A trust policy that refuses the role: authentication-failed, with what to check.
    const blocked = await failure(read(reports, caller('eve', { groups: ['blocked'] }), 'finance/q1.txt'));
    expect(blocked.message).toContain("STS refused the role (AccessDenied): the role's trust policy must trust");
    expect(sourceFailureReason(blocked)).toBe('authentication-failed');
    // Nothing was read for them with any credential; alice still reads.
    expect(keysSeen(seenFrom)).not.toContain(SERVICE.accessKeyId);
    expect(front.seen.slice(seenFrom)).toHaveLength(1);
    expect(text(await read(reports, alice, 'finance/q1.txt'))).toBe('finance numbers');
    // Not remembered: once STS answers again, mallory reads.
    sts.failFor.clear();
    expect(text(await read(reports, mallory, 'finance/q1.txt'))).toBe('finance numbers');
  });

  it('keeps injection through claims out of the form: the subject becomes a sanitised session name, never a parameter', async () => {
    const reports = source();
    const callsFrom = sts.calls.length;
    const subject = `x&RoleArn=${UNTRUSTED}&DurationSeconds=43200\r\n<Credentials>é${'z'.repeat(80)}`;
    expect(text(await read(reports, caller(subject, { groups: ['finance'] }), 'finance/q1.txt'))).toBe(
      'finance numbers',
    );
    const [call] = sts.calls.slice(callsFrom);
    expect(call?.roleArn).toBe(FINANCE);
    expect(call?.durationSeconds).toBe(900);
    expect(call?.form).toHaveLength(6);
    expect(call?.roleSessionName).toMatch(/^[\w+=,.@-]{2,64}$/);
    // Characters STS accepts stay (`=` among them), others become `_`, and a digest of the whole keeps it distinct.
    expect(call?.roleSessionName).toMatch(/^x_RoleArn=arn_aws_iam__123456789012_role_reports-untr-[0-9a-f]{10}$/);
    // The token names the subject as it is: JSON, not a form.
    expect(call?.claims?.sub).toBe(`tenant:acme:${subject}`);
  });

  it('refuses, naming why, a caller whose claims cannot be session tags as they are; STS is never asked', async () => {
    const reports = source();
    const callsFrom = sts.calls.length;
    for (const group of ['a&team=b', 'a b', '<x>', 'x'.repeat(257)]) {
      const error = await failure(
        read(reports, caller('bob', { groups: [group], scopes: ['team'] }), 'team-a/plan.txt'),
      );
      expect(isGatewayError(error) && error.code, group).toBe('MCPGW_SOURCE_UNAVAILABLE');
      expect(error.message).toMatch(/^S3 source "reports" cannot read for this caller: the caller's groups .* "team"$/);
    }
    expect(sts.calls.length).toBe(callsFrom);
  });

  it('shows nothing to a caller the mapping gives no role (default refuse), with no STS or S3 call', async () => {
    const reports = source();
    const callsFrom = sts.calls.length;
    const seenFrom = front.seen.length;
    const nobody = caller('nobody', { groups: ['guests'] });
    expect(await read(reports, nobody, 'finance/q1.txt')).toBeUndefined();
    expect((await list(reports, nobody)).items).toEqual([]);
    expect(await reports.read('s3:///reports/finance/q1.txt')).toBeUndefined();
    expect(sts.calls.length).toBe(callsFrom);
    expect(front.seen.length).toBe(seenFrom);
    // A default role instead: the unmapped caller gets it.
    const open = source({ default: { roleArn: FINANCE } });
    expect(text(await read(open, nobody, 'finance/q1.txt'))).toBe('finance numbers');
  });

  it('presents the configured audience (an S3-compatible STS such as MinIO registers its own)', async () => {
    const minioLike = await startStsStandIn({
      issuer: ISSUER,
      jwks,
      now,
      audience: 'minio',
      trust: { [FINANCE]: () => true },
    });
    try {
      const alice = caller('alice', { groups: ['finance'] });
      const wrong = source({ stsEndpoint: minioLike.endpoint });
      expect((await failure(read(wrong, alice, 'finance/q1.txt'))).message).toContain('(InvalidIdentityToken)');
      const right = source({ stsEndpoint: minioLike.endpoint, audience: 'minio' });
      // The S3 front knows the sessions of the first stand-in only: this one's key is refused by S3, not by STS.
      await failure(read(right, alice, 'finance/q1.txt'));
      expect(minioLike.calls.map((call) => call.answer)).toEqual(['InvalidIdentityToken', 'granted']);
      expect(minioLike.calls[1]?.claims?.aud).toBe('minio');
    } finally {
      await minioLike.close();
    }
  });

  it('refuses to start without the identity-token port, naming why', () => {
    const options = s3SourceOptionsSchema.parse({
      bucket: 'reports',
      callerIdentity: { roleArns: [FINANCE] },
    });
    expect(() =>
      createS3Source(options, { sourceId: 'reports', tenantId: 'acme', configDir: '/', logger: silentLogger }),
    ).toThrow('S3 source "reports" has callerIdentity, but this gateway mints no identity tokens for its tenants');
  });
});
