/**
 * A minimal OAuth 2.1 public client for the tests: PKCE, a cookie jar, and
 * redirects followed one hop at a time with fetch (redirect: 'manual'), the
 * way a browser would, until the authorization server sends the browser to
 * the client's redirect URI.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@mcpgw/core';
import { createDevAuthorizationServer } from '../src/create-dev-authorization-server.js';
import type { DevAuthorizationServer } from '../src/create-dev-authorization-server.js';
import type { DevResource } from '../src/resource-servers.js';
import { followToRedirectUri as followRedirects } from '@mcpgw/test-helpers/follow-redirects';

export const REDIRECT_URI = 'http://127.0.0.1:9/callback';

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  msg: string | undefined;
}

/** A Logger that keeps what it is given, so a test can assert nothing went wrong. */
export function recordingLogger(entries: LogEntry[] = []): Logger & { entries: LogEntry[] } {
  const at =
    (level: LogEntry['level']) =>
    (obj: object, msg?: string): void => {
      entries.push({ level, obj, msg });
    };
  return {
    entries,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => recordingLogger(entries),
  };
}

export interface RunningServer {
  server: DevAuthorizationServer;
  /** The origin the HTTP server listens on, e.g. http://127.0.0.1:41234 */
  origin: string;
  issuer: string;
  logger: ReturnType<typeof recordingLogger>;
  /** `req.url` as the host saw it when each response finished (what an access log would print). */
  finishedUrls: string[];
  close(): Promise<void>;
}

/**
 * Listens on a free loopback port first, so the issuer can name that port,
 * then creates the server and routes every request to its handler.
 */
export async function startDevServer(options: {
  keystorePath: string;
  resources: (origin: string) => DevResource[];
}): Promise<RunningServer> {
  let handler: DevAuthorizationServer['handler'] = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const finishedUrls: string[] = [];
  const http: Server = createServer((req, res) => {
    res.on('finish', () => finishedUrls.push(req.url ?? ''));
    handler(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const logger = recordingLogger();
  let server: DevAuthorizationServer;
  try {
    server = await createDevAuthorizationServer({
      issuer: `${origin}/dev-idp`,
      keystorePath: options.keystorePath,
      resources: options.resources(origin),
      logger,
    });
  } catch (error) {
    http.close();
    throw error;
  }
  handler = server.handler;
  return {
    server,
    origin,
    issuer: server.issuer,
    logger,
    finishedUrls,
    close: async () => {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await server.close();
    },
  };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function fetchJson(
  url: string,
  init?: RequestInit,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${init?.method ?? 'GET'} ${url} → ${response.status}, not JSON: ${text.slice(0, 300)}`);
  }
  return { status: response.status, body };
}

/** RFC 7591 registration of a public client (no secret), as the MCP SDK registers (scope included). */
export async function registerClient(metadata: Record<string, unknown>, registrationEndpoint: string): Promise<string> {
  const { status, body } = await fetchJson(registrationEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      client_name: 'test client',
      application_type: 'native',
      scope: 'resources:read offline_access',
      ...metadata,
    }),
  });
  if (status !== 201 || typeof body.client_id !== 'string') {
    throw new Error(`registration failed: ${status} ${JSON.stringify(body)}`);
  }
  return body.client_id;
}

/** Follows the authorization redirects like a browser until the test client's redirect URI. */
export function followToRedirectUri(authorizationUrl: URL, redirectUri = REDIRECT_URI): Promise<URL> {
  return followRedirects(authorizationUrl, redirectUri);
}
