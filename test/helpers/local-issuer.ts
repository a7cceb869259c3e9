import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** A key the local issuer signs with; `publicJwk` is what its JWKS publishes. */
export interface SigningKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256';
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function newSigningKey(alg: 'RS256' | 'ES256', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, publicJwk };
}

/** How the issuer's endpoints behave: answer, fail with 503, or never answer. */
export type IssuerMode = 'ok' | 'down' | 'hang';

export interface LocalIssuerOptions {
  /** Path of the issuer identifier, e.g. `/realms/a` (tests RFC 8414 path insertion). */
  readonly path?: string;
  /** Serve only OpenID Connect discovery (RFC 8414 URL answers 404). */
  readonly oidcOnly?: boolean;
  /** The `issuer` the metadata claims, when a test wants it to lie. */
  readonly metadataIssuer?: string;
  /** The client the introspection endpoint accepts (RFC 7662 section 2.1); absent: any credentials. */
  readonly introspectionClient?: { readonly clientId: string; readonly clientSecret: string };
}

/**
 * The one local test issuer: a real identity provider on 127.0.0.1:0 with
 * JWKS, RFC 8414 and OIDC metadata and RFC 7662 introspection, keys generated
 * by jose. It counts the requests each path receives, so tests can prove how
 * often the verifier calls it. `sign` writes exactly the claims it is given;
 * `token` fills in a valid RFC 9068 access token around them.
 */
export interface LocalIssuer {
  readonly origin: string;
  readonly issuer: string;
  readonly jwksUri: string;
  readonly introspectionEndpoint: string;
  readonly rsa: SigningKey;
  readonly ec: SigningKey;
  /** Keys the JWKS currently publishes (mutable: rotate by editing). */
  published: SigningKey[];
  mode: IssuerMode;
  /** Requests received, by path. */
  readonly hits: Map<string, number>;
  hitCount(path: string): number;
  /** Opaque token → introspection answer (absent → `{ active: false }`). */
  readonly opaqueTokens: Map<string, Record<string, unknown>>;
  /** Authorization headers the introspection endpoint received. */
  readonly introspectionAuth: string[];
  /** Signs a JWT; `typ` null leaves the header out. */
  sign(claims: JWTPayload, options?: SignOptions): Promise<string>;
  /**
   * A valid RFC 9068 access token (iss, sub `alice`, iat, exp in 5 minutes,
   * client_id, typ `at+jwt`, signed with the EC key) with `claims` and
   * `header` laid over it; `header.typ` undefined leaves typ out.
   */
  token(claims: JWTPayload & { aud: string | string[] }, header?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export interface SignOptions {
  readonly key?: SigningKey;
  readonly header?: Record<string, unknown>;
  readonly typ?: string | null;
  readonly crit?: Record<string, boolean>;
}

export async function startLocalIssuer(options: LocalIssuerOptions = {}): Promise<LocalIssuer> {
  const rsa = await newSigningKey('RS256', 'rsa-1');
  const ec = await newSigningKey('ES256', 'ec-1');
  const hung: ServerResponse[] = [];
  const server = createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const path = options.path ?? '';
  const issuerId = `${origin}${path}`;

  const state: LocalIssuer = {
    origin,
    issuer: issuerId,
    jwksUri: `${origin}/jwks`,
    introspectionEndpoint: `${origin}/introspect`,
    rsa,
    ec,
    published: [rsa, ec],
    mode: 'ok',
    hits: new Map(),
    hitCount: (p) => state.hits.get(p) ?? 0,
    opaqueTokens: new Map(),
    introspectionAuth: [],
    async sign(claims, signOptions = {}) {
      const key = signOptions.key ?? rsa;
      const header: Record<string, unknown> = { alg: key.alg, kid: key.kid, ...signOptions.header };
      if (signOptions.typ !== null) header.typ = signOptions.typ ?? 'at+jwt';
      const jwt = new SignJWT(claims).setProtectedHeader(header as { alg: string });
      return jwt.sign(key.privateKey, signOptions.crit === undefined ? undefined : { crit: signOptions.crit });
    },
    token(claims, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      const { typ, ...rest } = header;
      return state.sign(
        { iss: issuerId, sub: 'alice', iat: now, exp: now + 300, client_id: 'test-client', ...claims },
        { key: ec, header: rest, typ: 'typ' in header ? ((typ as string | undefined) ?? null) : 'at+jwt' },
      );
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };

  const metadata = () => ({
    issuer: options.metadataIssuer ?? issuerId,
    jwks_uri: state.jwksUri,
    introspection_endpoint: state.introspectionEndpoint,
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', origin);
    state.hits.set(url.pathname, state.hitCount(url.pathname) + 1);
    if (state.mode === 'hang') {
      hung.push(res);
      return;
    }
    if (state.mode === 'down') return send(res, 503, { error: 'down' });
    if (req.method === 'GET' && url.pathname === '/jwks') {
      return send(res, 200, { keys: state.published.map((k) => k.publicJwk) });
    }
    if (
      req.method === 'GET' &&
      url.pathname === `/.well-known/oauth-authorization-server${path}` &&
      !options.oidcOnly
    ) {
      return send(res, 200, metadata());
    }
    if (req.method === 'GET' && url.pathname === `${path}/.well-known/openid-configuration`) {
      return send(res, 200, metadata());
    }
    if (req.method === 'POST' && url.pathname === '/introspect') {
      const auth = req.headers.authorization ?? '';
      state.introspectionAuth.push(auth);
      const client = options.introspectionClient;
      const expected =
        client === undefined
          ? undefined
          : `Basic ${Buffer.from(`${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`).toString('base64')}`;
      if (expected !== undefined && auth !== expected) return send(res, 401, { error: 'invalid_client' });
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const answer = state.opaqueTokens.get(form.get('token') ?? '') ?? { active: false };
      return send(res, 200, answer);
    }
    send(res, 404, { error: 'not_found' });
  }

  return state;
}

/** RFC 6749 section 2.3.1: client id and secret are form-urlencoded before base64. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
