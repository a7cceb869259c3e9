/**
 * An S3 front for s3rver that checks what s3rver does not: the SigV4
 * signature of each request (AWS Signature Version 4, "Create a signed AWS
 * API request"), recomputed with the secret STS issued for its access key,
 * the session token beside it, the session's expiry by the test's clock,
 * and a bucket policy that is a function of the session's role and tags.
 * It records the access key of every request, then passes the request on
 * to s3rver under s3rver's own account (s3rver knows one key and never
 * checks SigV4 signatures itself).
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { IssuedSession } from './sts-stand-in.js';

/** The source's own credential, also accepted (health, change detection). */
export interface ServiceKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export interface SeenRequest {
  readonly accessKeyId: string;
  readonly method: string;
  /** The object key or listing prefix asked for. */
  readonly key: string;
  readonly status: number;
}

export interface SessionCheckingS3Options {
  /** s3rver's endpoint. */
  readonly target: string;
  readonly sessions: ReadonlyMap<string, IssuedSession>;
  readonly service: ServiceKey;
  /** Whether a session may read `key` (an object key, or a ListObjectsV2 prefix). */
  readonly allow: (session: IssuedSession, key: string) => boolean;
  readonly now: () => number;
}

export interface SessionCheckingS3 {
  readonly endpoint: string;
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

const sha256 = (value: string | Buffer) => createHash('sha256').update(value).digest('hex');
const hmac = (key: string | Buffer, value: string) => createHmac('sha256', key).update(value).digest();
/** RFC 3986 unreserved characters stay, everything else is percent-encoded: SigV4's URI encoding. */
const strict = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function s3Error(response: ServerResponse, status: number, code: string, seen: () => void): void {
  seen();
  response
    .writeHead(status, { 'content-type': 'application/xml' })
    .end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
}

/** The signature SigV4 gives this request with `secret`, for the headers it says it signed. */
function expectedSignature(request: IncomingMessage, secret: string, scope: string, signed: string[]): string {
  const url = new URL(request.url ?? '/', 'http://front');
  const rawQuery = (request.url ?? '').includes('?')
    ? (request.url ?? '').slice((request.url ?? '').indexOf('?') + 1)
    : '';
  const query = rawQuery
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      const name = decodeURIComponent(at < 0 ? pair : pair.slice(0, at));
      const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1));
      return [strict(name), strict(value)] as const;
    })
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const headers = signed.map((name) => {
    const value = request.headers[name];
    const text = Array.isArray(value) ? value.join(',') : (value ?? '');
    return `${name}:${text.trim().replace(/\s+/g, ' ')}\n`;
  });
  const canonical = [
    request.method ?? 'GET',
    url.pathname, // S3 signs the path as sent, encoded once
    query,
    headers.join(''),
    signed.join(';'),
    String(request.headers['x-amz-content-sha256'] ?? 'UNSIGNED-PAYLOAD'),
  ].join('\n');
  const [date, region, service] = scope.split('/') as [string, string, string];
  const toSign = ['AWS4-HMAC-SHA256', String(request.headers['x-amz-date']), scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

export async function startSessionCheckingS3(options: SessionCheckingS3Options): Promise<SessionCheckingS3> {
  const upstream = new URL(options.target);
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((incoming, outgoing) => {
    const authorization = String(incoming.headers.authorization ?? '');
    const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(
      authorization,
    );
    const url = new URL(incoming.url ?? '/', 'http://front');
    const key = url.searchParams.get('prefix') ?? decodeURIComponent(url.pathname.split('/').slice(2).join('/'));
    const accessKeyId = match?.[1] ?? '(none)';
    const note = (status: number) => () => seen.push({ accessKeyId, method: incoming.method ?? 'GET', key, status });
    if (match === null) return s3Error(outgoing, 403, 'AccessDenied', note(403));
    const [, , scope, signedHeaders, signature] = match as unknown as [string, string, string, string, string];
    const session = options.sessions.get(accessKeyId);
    const secret =
      session?.secretAccessKey ??
      (accessKeyId === options.service.accessKeyId ? options.service.secretAccessKey : undefined);
    if (secret === undefined) return s3Error(outgoing, 403, 'InvalidAccessKeyId', note(403));
    if (expectedSignature(incoming, secret, scope, signedHeaders.split(';')) !== signature) {
      return s3Error(outgoing, 403, 'SignatureDoesNotMatch', note(403));
    }
    if (session !== undefined) {
      if (incoming.headers['x-amz-security-token'] !== session.sessionToken) {
        return s3Error(outgoing, 403, 'InvalidToken', note(403));
      }
      if (options.now() >= session.expiresAt) return s3Error(outgoing, 400, 'ExpiredToken', note(400));
      if (!options.allow(session, key)) return s3Error(outgoing, 403, 'AccessDenied', note(403));
    }
    const headers: Record<string, unknown> = {
      ...incoming.headers,
      authorization: authorization.replace(accessKeyId, 'S3RVER'),
    };
    delete headers['x-amz-security-token'];
    const forwarded = httpRequest(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: headers as Record<string, string | string[]>,
      },
      (response) => {
        note(response.statusCode ?? 502)();
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    forwarded.once('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
