import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { JWK, JWTPayload } from 'jose';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';

/**
 * A real OAuth issuer for tests: its own key pair, a JWKS and RFC 8414
 * metadata served over HTTP on a loopback port, real signed access tokens,
 * and an RFC 7662 introspection endpoint answering from `opaqueTokens`.
 * Counts JWKS fetches so tests can see what the gateway asks for.
 */
export interface LocalIssuer {
  /** e.g. http://127.0.0.1:40000/idp-a */
  issuer: string;
  jwksUri: string;
  /** RFC 7662 endpoint; any client credentials are accepted. */
  introspectionEndpoint: string;
  /** Opaque token → its introspection answer (absent → `{ active: false }`). */
  opaqueTokens: Map<string, Record<string, unknown>>;
  jwksFetches(): number;
  /** A signed RFC 9068 access token; override any claim or header field. */
  token(claims: JWTPayload & { aud: string | string[] }, header?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export async function startLocalIssuer(name: string): Promise<LocalIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = `${name}-key-1`;
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  let fetches = 0;
  let base = '';
  const opaqueTokens = new Map<string, Record<string, unknown>>();
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '';
    if (request.method === 'POST' && path === `/${name}/introspect`) {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const token = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('token') ?? '';
        response
          .setHeader('content-type', 'application/json')
          .end(JSON.stringify(opaqueTokens.get(token) ?? { active: false }));
      });
    } else if (path === `/${name}/jwks.json`) {
      fetches += 1;
      response.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [publicJwk] }));
    } else if (path === `/.well-known/oauth-authorization-server/${name}`) {
      response.setHeader('content-type', 'application/json').end(
        JSON.stringify({
          issuer: `${base}/${name}`,
          jwks_uri: `${base}/${name}/jwks.json`,
          response_types_supported: ['code'],
        }),
      );
    } else {
      response.statusCode = 404;
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('issuer did not bind');
  base = `http://127.0.0.1:${address.port}`;
  const issuer = `${base}/${name}`;
  return {
    issuer,
    jwksUri: `${issuer}/jwks.json`,
    introspectionEndpoint: `${issuer}/introspect`,
    opaqueTokens,
    jwksFetches: () => fetches,
    token: (claims, header = {}) => sign(privateKey, kid, issuer, claims, header),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

async function sign(key: SigningKey, kid: string, issuer: string, claims: JWTPayload, header: Record<string, unknown>) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: issuer, sub: 'alice', iat: now, exp: now + 300, client_id: 'test-client', ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid, ...header })
    .sign(key);
}
