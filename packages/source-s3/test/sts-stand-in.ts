/**
 * A loopback stand-in for AWS STS: it speaks the AssumeRoleWithWebIdentity
 * Query API (a form POST, an XML answer) as the STS API Reference describes
 * it, because the real service cannot run in a test. What it checks is what
 * STS checks: the web identity token's signature against the tenant's JWKS
 * (given, or fetched from where the tenant publishes it),
 * its issuer, `aud` and `exp` (by the test's clock), and a trust policy per
 * role (here a function of the token's verified claims). Each grant issues
 * fresh credentials, remembered so the S3 front (`session-checking-s3.ts`)
 * can tell whose a request's access key is.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';

/** What STS saw of one AssumeRoleWithWebIdentity call. */
export interface StsCall {
  /** The form as received, every parameter with all its values. */
  readonly form: ReadonlyArray<readonly [string, string]>;
  readonly roleArn: string;
  readonly roleSessionName: string;
  readonly durationSeconds: number;
  /** The verified token's claims; undefined when it did not verify. */
  readonly claims: JWTPayload | undefined;
  readonly answer: 'granted' | string;
}

/** Credentials STS issued, with what they were issued for. */
export interface IssuedSession {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiresAt: number;
  readonly roleArn: string;
  readonly roleSessionName: string;
  /** `principal_tags` of the token, one value each. */
  readonly tags: Readonly<Record<string, string>>;
  readonly subject: string;
}

export interface StsStandInOptions {
  readonly issuer: string;
  /**
   * The tenant's JWKS, or where it is published: STS fetches an OIDC
   * provider's keys from there (the gateway's `${base}/t/{tenant}/oauth/jwks`).
   */
  readonly jwks: JSONWebKeySet | URL;
  /** The `aud` the OIDC provider is registered with. Default `sts.amazonaws.com`. */
  readonly audience?: string;
  /** Each role's trust policy: whether these verified claims may assume it. */
  readonly trust: Readonly<Record<string, (claims: JWTPayload) => boolean>>;
  /** Milliseconds since the epoch (the test's clock). */
  readonly now: () => number;
}

export interface StsStandIn {
  readonly endpoint: string;
  readonly calls: StsCall[];
  /** By access key id. */
  readonly issued: Map<string, IssuedSession>;
  /** While set, calls for this role session name are answered with this STS error (code, HTTP status). */
  failFor: Map<string, { code: string; status: number }>;
  close(): Promise<void>;
}

const SAFE_XML = (value: string) =>
  value.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

function errorXml(code: string, message: string): string {
  return `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${SAFE_XML(message)}</Message></Error><RequestId>test</RequestId></ErrorResponse>`;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startStsStandIn(options: StsStandInOptions): Promise<StsStandIn> {
  const keys = options.jwks instanceof URL ? createRemoteJWKSet(options.jwks) : createLocalJWKSet(options.jwks);
  const audience = options.audience ?? 'sts.amazonaws.com';
  const calls: StsCall[] = [];
  const issued = new Map<string, IssuedSession>();
  const failFor = new Map<string, { code: string; status: number }>();
  const server = createServer((request, response) => {
    void (async () => {
      const text = await bodyOf(request);
      const params = new URLSearchParams(text);
      const form = [...params.entries()];
      const one = (name: string) => (params.getAll(name).length === 1 ? params.get(name)! : undefined);
      const roleArn = one('RoleArn') ?? '';
      const roleSessionName = one('RoleSessionName') ?? '';
      const durationSeconds = Number(one('DurationSeconds'));
      const reply = (status: number, body: string, claims: JWTPayload | undefined, answer: string) => {
        calls.push({ form, roleArn, roleSessionName, durationSeconds, claims, answer });
        response.writeHead(status, { 'content-type': 'text/xml' }).end(body);
      };
      if (
        request.method !== 'POST' ||
        one('Action') !== 'AssumeRoleWithWebIdentity' ||
        one('Version') !== '2011-06-15' ||
        form.some(([name]) => params.getAll(name).length > 1)
      ) {
        reply(400, errorXml('InvalidAction', 'not one AssumeRoleWithWebIdentity call'), undefined, 'InvalidAction');
        return;
      }
      if (!/^[\w+=,.@-]{2,64}$/.test(roleSessionName)) {
        reply(400, errorXml('ValidationError', 'roleSessionName fails its constraint'), undefined, 'ValidationError');
        return;
      }
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(one('WebIdentityToken') ?? '', keys, {
          issuer: options.issuer,
          audience,
          currentDate: new Date(options.now()),
        }));
      } catch (error) {
        const message = (error as Error).message;
        reply(400, errorXml('InvalidIdentityToken', message), undefined, 'InvalidIdentityToken');
        return;
      }
      const failure = failFor.get(roleSessionName);
      if (failure !== undefined) {
        reply(failure.status, errorXml(failure.code, 'failing on purpose'), claims, failure.code);
        return;
      }
      const trusts = options.trust[roleArn];
      if (trusts === undefined || !trusts(claims)) {
        reply(
          403,
          errorXml('AccessDenied', 'Not authorized to perform sts:AssumeRoleWithWebIdentity'),
          claims,
          'AccessDenied',
        );
        return;
      }
      const tagClaim = claims['https://aws.amazon.com/tags'] as
        { principal_tags?: Record<string, string[]>; transitive_tag_keys?: string[] } | undefined;
      const tags = Object.fromEntries(
        Object.entries(tagClaim?.principal_tags ?? {}).map(([name, values]) => [name, values[0] ?? '']),
      );
      const session: IssuedSession = {
        accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
        secretAccessKey: randomBytes(20).toString('base64'),
        sessionToken: randomBytes(48).toString('base64'),
        expiresAt: options.now() + durationSeconds * 1000,
        roleArn,
        roleSessionName,
        tags,
        subject: String(claims.sub),
      };
      issued.set(session.accessKeyId, session);
      reply(
        200,
        `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult>` +
          `<SubjectFromWebIdentityToken>${SAFE_XML(session.subject)}</SubjectFromWebIdentityToken>` +
          `<Credentials><AccessKeyId>${session.accessKeyId}</AccessKeyId><SecretAccessKey>${SAFE_XML(session.secretAccessKey)}</SecretAccessKey>` +
          `<SessionToken>${SAFE_XML(session.sessionToken)}</SessionToken><Expiration>${new Date(session.expiresAt).toISOString()}</Expiration></Credentials>` +
          `</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`,
        claims,
        'granted',
      );
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    calls,
    issued,
    failFor,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
