import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { createIdentityTokenMinter } from '../src/identity-token.js';
import { sessionNameOf } from '../src/caller-plan.js';
import { s3SourceOptionsSchema } from '../src/s3-source-options.js';

const READER = 'arn:aws:iam::123456789012:role/reader';
const WRITER = 'arn:aws:iam::123456789012:role/writer';

const issues = (callerIdentity: unknown) => {
  const result = s3SourceOptionsSchema.safeParse({ bucket: 'reports', callerIdentity });
  return result.success ? [] : result.error.issues.map((issue) => [issue.path.join('.'), issue.message]);
};

describe('callerIdentity options', () => {
  it('refuses a mapping or default naming a role outside the allowlist, naming the field', () => {
    expect(
      issues({
        roleArns: [READER],
        mapping: [
          { match: { groups: ['staff'] }, roleArn: READER },
          { match: { groups: ['admins'] }, roleArn: WRITER },
        ],
        default: { roleArn: WRITER },
      }),
    ).toEqual([
      [
        'callerIdentity.mapping.1.roleArn',
        `role "${WRITER}" is not in callerIdentity.roleArns, the roles an operator allows this source to assume`,
      ],
      [
        'callerIdentity.default.roleArn',
        `role "${WRITER}" is not in callerIdentity.roleArns, the roles an operator allows this source to assume`,
      ],
    ]);
  });

  it('states its defaults and accepts a MinIO role ARN and STS endpoint', () => {
    const parsed = s3SourceOptionsSchema.parse({
      bucket: 'reports',
      callerIdentity: { roleArns: ['arn:minio:iam:::role/reader'], stsEndpoint: 'http://minio.internal:9000/' },
    });
    expect(parsed.callerIdentity).toEqual({
      roleArns: ['arn:minio:iam:::role/reader'],
      mapping: [],
      default: 'refuse',
      sessionTags: {},
      stsEndpoint: 'http://minio.internal:9000/',
      audience: 'sts.amazonaws.com',
      durationSeconds: 3600,
    });
  });

  it('refuses malformed ARNs, tag names and claims, and durations STS would refuse', () => {
    expect(issues({ roleArns: ['reader'] })[0]?.[0]).toBe('callerIdentity.roleArns.0');
    expect(issues({ roleArns: [READER], sessionTags: { 'aws:team': 'groups' } })[0]?.[1]).toContain('aws:');
    expect(issues({ roleArns: [READER], sessionTags: { 'team&x': 'groups' } })[0]?.[0]).toBe(
      'callerIdentity.sessionTags.team&x',
    );
    expect(issues({ roleArns: [READER], sessionTags: { team: 'email' } })[0]?.[0]).toBe(
      'callerIdentity.sessionTags.team',
    );
    expect(issues({ roleArns: [READER], sessionTags: { Team: 'groups', team: 'scopes' } })[0]?.[1]).toContain('case');
    expect(issues({ roleArns: [READER], durationSeconds: 60 })[0]?.[0]).toBe('callerIdentity.durationSeconds');
    expect(issues({ roleArns: [READER], stsEndpoint: 'http://user:pw@sts.local/' })[0]?.[0]).toBe(
      'callerIdentity.stsEndpoint',
    );
  });
});

describe('session names', () => {
  it('keeps a subject STS accepts and cleans any other into [\\w+=,.@-]{2,64}, distinct per subject', () => {
    expect(sessionNameOf('alice@example.com')).toBe('alice@example.com');
    for (const subject of ['a', 'ü', 'a b', 'x'.repeat(65), 'a\nRoleArn=b', '']) {
      expect(sessionNameOf(subject)).toMatch(/^[\w+=,.@-]{2,64}$/);
    }
    expect(sessionNameOf('a b')).not.toBe(sessionNameOf('a/b'));
  });
});

describe('the identity token minter', () => {
  it("signs with the tenant's RSA or EC key, verifiable by its JWKS, and never lets claims override registered ones", async () => {
    for (const [type, options, alg] of [
      ['rsa', { modulusLength: 2048 }, 'RS256'],
      ['ec', { namedCurve: 'P-384' }, 'ES384'],
    ] as const) {
      const { privateKey, publicKey } = generateKeyPairSync(type as 'rsa', options as { modulusLength: number });
      const privateJwk = privateKey.export({ format: 'jwk' }) as JsonWebKey;
      const keys = createLocalJWKSet({ keys: [{ ...(publicKey.export({ format: 'jwk' }) as object), kid: 'k1' }] });
      const nowMs = Date.UTC(2026, 0, 5);
      const mint = createIdentityTokenMinter({
        signingKey: () => ({ privateJwk, kid: 'k1' }),
        issuer: (tenantId) => `https://gw.example/t/${tenantId}/oauth`,
        now: () => nowMs,
      });
      const token = await mint({ tenantId: 'acme', subject: 'tenant:acme:bob', claims: { x: 1 }, audience: 'sts' });
      const { payload, protectedHeader } = await jwtVerify(token, keys, {
        issuer: 'https://gw.example/t/acme/oauth',
        audience: 'sts',
        currentDate: new Date(nowMs),
      });
      expect(protectedHeader).toEqual({ alg, typ: 'JWT', kid: 'k1' });
      expect(payload).toMatchObject({ sub: 'tenant:acme:bob', x: 1, iat: nowMs / 1000, exp: nowMs / 1000 + 300 });
      await expect(
        mint({ tenantId: 'acme', subject: 's', claims: { sub: 'someone-else' }, audience: 'sts' }),
      ).rejects.toThrow('"sub" is the minter\'s to set');
    }
  });
});
