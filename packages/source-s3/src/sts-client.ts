import type { Agent } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { nodeHttp } from '@mcpgw/core';

/** Temporary credentials of one role session. */
export interface SessionCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken: string;
  readonly expiration: Date;
}

/** One AssumeRoleWithWebIdentity call (AWS STS API Reference). */
export interface AssumeRoleWithWebIdentityRequest {
  /** The STS endpoint, e.g. `https://sts.eu-west-1.amazonaws.com/` or MinIO's own. */
  readonly endpoint: string;
  readonly roleArn: string;
  readonly roleSessionName: string;
  readonly webIdentityToken: string;
  readonly durationSeconds: number;
  /** The agent for the endpoint's scheme (the egress guard's, for a tenant admin's source). */
  readonly agent?: Agent | undefined;
  readonly signal: AbortSignal;
}

/**
 * STS answered with an error document. `code` is STS's (`AccessDenied`,
 * `InvalidIdentityToken`, `IDPCommunicationError`, `ExpiredTokenException`,
 * ...), so `sourceFailureReason` classes it like any backend error.
 */
export class StsError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(code: string, status: number, message: string) {
    super(`STS ${code} (HTTP ${status}): ${message}`);
    this.name = 'StsError';
    this.code = code;
    this.status = status;
  }
}

/** An STS answer is a few KiB; anything much larger is not one. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Calls AssumeRoleWithWebIdentity with the Query API: a form POST (the
 * parameters encoded by URLSearchParams, so no value can add or change
 * another), unsigned, since the web identity token is the credential.
 */
export async function assumeRoleWithWebIdentity(
  request: AssumeRoleWithWebIdentityRequest,
): Promise<SessionCredentials> {
  const body = new URLSearchParams({
    Action: 'AssumeRoleWithWebIdentity',
    Version: '2011-06-15',
    RoleArn: request.roleArn,
    RoleSessionName: request.roleSessionName,
    WebIdentityToken: request.webIdentityToken,
    DurationSeconds: String(request.durationSeconds),
  }).toString();
  const { status, text } = await post(request.endpoint, body, request.agent, request.signal);
  if (status !== 200) {
    const error = section(text, 'Error');
    throw new StsError(
      (error === undefined ? undefined : element(error, 'Code')) ?? 'UnknownError',
      status,
      (error === undefined ? undefined : element(error, 'Message')) ?? 'no error document',
    );
  }
  const credentials = section(text, 'Credentials');
  const accessKeyId = credentials === undefined ? undefined : element(credentials, 'AccessKeyId');
  const secretAccessKey = credentials === undefined ? undefined : element(credentials, 'SecretAccessKey');
  const sessionToken = credentials === undefined ? undefined : element(credentials, 'SessionToken');
  const expiration = new Date((credentials === undefined ? undefined : element(credentials, 'Expiration')) ?? NaN);
  if (!accessKeyId || !secretAccessKey || !sessionToken || Number.isNaN(expiration.getTime())) {
    throw new StsError('MalformedResponse', status, 'the answer holds no complete Credentials');
  }
  return { accessKeyId, secretAccessKey, sessionToken, expiration };
}

function post(
  endpoint: string,
  body: string,
  agent: Agent | undefined,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  const url = new URL(endpoint);
  const send = url.protocol === 'https:' ? httpsRequest : nodeHttp.request;
  return new Promise((resolve, reject) => {
    const outgoing = send(
      url,
      {
        method: 'POST',
        signal,
        ...(agent === undefined ? {} : { agent }),
        headers: {
          'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
          'content-length': Buffer.byteLength(body),
          accept: 'text/xml',
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            response.destroy(new Error(`the STS answer exceeds ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.once('error', reject);
        response.once('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    outgoing.once('error', reject);
    outgoing.end(body);
  });
}

/** The content of the first `<name>...</name>` (no attributes in STS answers' elements of interest). */
function section(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return match?.[1];
}

/** A text-only element's value, its character references decoded (XML 1.0 section 4.6). */
function element(xml: string, name: string): string | undefined {
  const content = section(xml, name);
  if (content === undefined || content.includes('<')) return undefined;
  return content.trim().replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-fA-F]+);/g, (_, entity: string) => {
    if (entity[0] === '#') {
      const point = entity[1] === 'x' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
      return String.fromCodePoint(point);
    }
    return { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' }[entity] as string;
  });
}
