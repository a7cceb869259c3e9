/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-02)
 * at a real oidc-provider with the clients policy: a document served over
 * https is fetched and its client accepted; every abuse of the fetch is
 * refused with an `invalid_client` that says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METADATA_DOCUMENT_CACHE_SECONDS } from '../../src/index.js';
import { json, startDocumentServer, type DocumentServer } from './document-server.js';
import { authorize, clientPolicy, startProvider, type RunningProvider } from './harness.js';

const REDIRECT_URI = 'https://client.example.test/callback';
const FETCH_TIMEOUT_MS = 500;

let documents: DocumentServer;
let open: RunningProvider;
let paths = 0;

/** A fresh path on the document server, and the client_id naming it on `host`. */
function clientUrl(host = 'client.example.test'): { path: string; clientId: string } {
  paths += 1;
  const path = `/clients/${paths}.json`;
  return { path, clientId: `https://${host}:${documents.port}${path}` };
}

function metadataDocument(clientId: string, extra: Record<string, unknown> = {}) {
  return { client_id: clientId, client_name: 'Test connector', redirect_uris: [REDIRECT_URI], ...extra };
}

beforeAll(async () => {
  documents = await startDocumentServer([
    'client.example.test',
    'other.example.test',
    'claude.ai',
    'loopback.example.test',
  ]);
  open = await startProvider(clientPolicy({ metadataDocuments: 'open' }), {
    trustedCertificates: [documents.cert],
    fetchTimeoutMs: FETCH_TIMEOUT_MS,
  });
});
afterAll(async () => {
  await open?.close();
  await documents?.close();
});

async function expectRefused(running: RunningProvider, clientId: string, description: RegExp) {
  const result = await authorize(running, clientId, REDIRECT_URI);
  expect(result.status).toBe(400);
  expect(result.body).toMatchObject({ error: 'invalid_client' });
  expect(String(result.body?.error_description)).toMatch(description);
  // Told at debug, for whoever debugs a connector; never louder (anyone can send any client_id).
  expect(
    running.logger.entries.some(
      (entry) =>
        entry.level === 'debug' && entry.obj.clientId === clientId && description.test(String(entry.obj.reason)),
    ),
  ).toBe(true);
  return result;
}

describe('a metadata document served over https', () => {
  it('is fetched once and its client accepted: the authorization request goes on to the sign-in', async () => {
    const { path, clientId } = clientUrl();
    documents.route(path, json(metadataDocument(clientId)));

    const first = await authorize(open, clientId, REDIRECT_URI);
    expect(first.status).toBe(303);
    expect(first.location).toMatch(/^\/interaction\//);
    const again = await authorize(open, clientId, REDIRECT_URI);
    expect(again.status).toBe(303);
    // Cached for at least the minimum (a document without Cache-Control included).
    expect(documents.requests.get(path)).toBe(1);
    expect(METADATA_DOCUMENT_CACHE_SECONDS.min).toBeGreaterThanOrEqual(60);
  });

  it('is advertised in the authorization server metadata', async () => {
    const metadata = (await (await fetch(`${open.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.client_id_metadata_document_supported).toBe(true);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(['none']);
  });

  it('still holds the client to its redirect URIs', async () => {
    const { path, clientId } = clientUrl();
    documents.route(path, json(metadataDocument(clientId)));
    const result = await authorize(open, clientId, 'https://attacker.example/callback');
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ error: 'invalid_redirect_uri' });
  });

  it('is refused when it names a secret-based or non-public authentication method', async () => {
    const { path, clientId } = clientUrl();
    documents.route(
      path,
      json(metadataDocument(clientId, { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } })),
    );
    const result = await authorize(open, clientId, REDIRECT_URI);
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ error: 'invalid_client_metadata' });
    expect(String(result.body?.error_description)).toMatch(/token_endpoint_auth_method must be "none"/);
  });

  it('is refused when a redirect URI is plain http off loopback', async () => {
    const { path, clientId } = clientUrl();
    documents.route(path, json(metadataDocument(clientId, { redirect_uris: ['http://client.example.test/callback'] })));
    const result = await authorize(open, clientId, 'http://client.example.test/callback');
    expect(result.status).toBe(400);
    expect(result.body).toMatchObject({ error: 'invalid_redirect_uri' });
  });
});

describe('the fetch of a metadata document', () => {
  it('refuses a document over the size limit, without reading the rest', async () => {
    const { path, clientId } = clientUrl();
    documents.route(path, json(metadataDocument(clientId, { padding: 'x'.repeat(6 * 1024) })));
    await expectRefused(open, clientId, /client metadata document too large \(more than 5120 bytes\)/);
  });

  it('refuses an oversized document sent without a Content-Length', async () => {
    const { path, clientId } = clientUrl();
    documents.route(path, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(`{"client_id":${JSON.stringify(clientId)},"padding":"`);
      for (let index = 0; index < 8; index += 1) response.write('y'.repeat(1024));
      response.end('"}');
    });
    await expectRefused(open, clientId, /too large/);
  });

  it('refuses a document that trickles in slower than the time limit', async () => {
    const { path, clientId } = clientUrl();
    const started = Date.now();
    let trickle: NodeJS.Timeout | undefined;
    documents.route(path, (request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{');
      // A byte every 100 ms: never too large, never done within the limit.
      trickle = setInterval(() => response.write(' '), 100);
      request.socket.on('close', () => clearInterval(trickle));
    });
    await expectRefused(open, clientId, /took longer than 0\.5 s/);
    clearInterval(trickle);
    // Refused at the limit, not when the server gives up (it never does).
    expect(Date.now() - started).toBeLessThan(FETCH_TIMEOUT_MS * 2 + 1000);
  });

  it('does not follow a redirect', async () => {
    const { path, clientId } = clientUrl();
    const target = clientUrl();
    documents.route(target.path, json(metadataDocument(clientId)));
    documents.route(path, (_request, response) => {
      response.writeHead(302, { location: `https://client.example.test:${documents.port}${target.path}` }).end();
    });
    await expectRefused(open, clientId, /redirected \(HTTP 302\); redirects are not followed/);
    expect(documents.requests.get(target.path)).toBeUndefined();
  });

  it('refuses a host that resolves to a loopback address', async () => {
    const { path, clientId } = clientUrl('loopback.example.test');
    documents.route(path, json(metadataDocument(clientId)));
    await expectRefused(open, clientId, /loopback\.example\.test resolves to a loopback address/);
    // The guard refused before connecting: the document server (on loopback) saw nothing.
    expect(documents.requests.get(path)).toBeUndefined();
  });

  it('refuses a host that resolves to the link-local cloud metadata service address (169.254.169.254)', async () => {
    const { clientId } = clientUrl('metadata.example.test');
    await expectRefused(open, clientId, /metadata\.example\.test resolves to a cloud metadata address/);
  });

  it('refuses 169.254.169.254 named directly', async () => {
    await expectRefused(
      open,
      'https://169.254.169.254/latest/meta-data/client.json',
      /169\.254\.169\.254 is a cloud metadata address/,
    );
  });

  it('refuses a host that resolves to another link-local address', async () => {
    const { clientId } = clientUrl('link-local.example.test');
    await expectRefused(open, clientId, /link-local\.example\.test resolves to a link-local address/);
  });

  it('refuses a host that resolves to a private address', async () => {
    const { clientId } = clientUrl('private.example.test');
    await expectRefused(open, clientId, /private\.example\.test resolves to a private address/);
  });

  it('refuses a server whose certificate is not trusted', async () => {
    const untrusting = await startProvider(clientPolicy({ metadataDocuments: 'open' }));
    try {
      const { path, clientId } = clientUrl();
      documents.route(path, json(metadataDocument(clientId)));
      await expectRefused(untrusting, clientId, /does not present a trusted TLS certificate/);
    } finally {
      await untrusting.close();
    }
  });

  it('refuses a document answered with another status than 200', async () => {
    const { clientId } = clientUrl();
    await expectRefused(open, clientId, /answered HTTP 404, not 200/);
  });
});

describe('the trust policy', () => {
  it('off: nothing is advertised nor fetched, and a URL client_id is an unknown client', async () => {
    const off = await startProvider(clientPolicy({ metadataDocuments: 'off' }), {
      trustedCertificates: [documents.cert],
    });
    try {
      const { path, clientId } = clientUrl();
      documents.route(path, json(metadataDocument(clientId)));
      const result = await authorize(off, clientId, REDIRECT_URI);
      expect(result.status).toBe(400);
      expect(result.body).toMatchObject({ error: 'invalid_client' });
      expect(documents.requests.get(path)).toBeUndefined();
      const metadata = (await (await fetch(`${off.issuer}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      expect(metadata.client_id_metadata_document_supported).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it('an allowlist admits the listed client URLs, hosts and presets only, and fetches nothing else', async () => {
    const listed = clientUrl('other.example.test');
    const byHost = clientUrl('client.example.test');
    const byPreset = clientUrl('claude.ai');
    const unlisted = clientUrl('other.example.test');
    for (const { path, clientId } of [listed, byHost, byPreset, unlisted]) {
      documents.route(path, json(metadataDocument(clientId)));
    }
    const allowlist = await startProvider(
      clientPolicy({ metadataDocuments: { allow: [listed.clientId, 'client.example.test', 'claude'] } }),
      { trustedCertificates: [documents.cert] },
    );
    try {
      for (const admitted of [listed, byHost, byPreset]) {
        expect((await authorize(allowlist, admitted.clientId, REDIRECT_URI)).status).toBe(303);
      }
      await expectRefused(allowlist, unlisted.clientId, /not among the clients this authorization server trusts/);
      expect(documents.requests.get(unlisted.path)).toBeUndefined();
    } finally {
      await allowlist.close();
    }
  });
});
