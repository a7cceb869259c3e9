import { request } from 'node:https';
import type { Agent } from 'node:https';
import { egressAgents, findEgressRefusal, type EgressGuard } from '@mcpgw/core';

/**
 * The limits of one fetch of a client's metadata document.
 * draft-ietf-oauth-client-id-metadata-document-02 section 8.7 recommends a
 * response size limit of 5 kilobytes (oidc-provider's default too); a
 * document is a few hundred bytes of JSON. The time limit covers the whole
 * exchange, connection to last byte, so a server that trickles its body
 * cannot hold an authorization request (and a socket) for long.
 */
export const METADATA_DOCUMENT_LIMITS = { maxBytes: 5 * 1024, timeoutMs: 2000 } as const;

/** A fetch refused or failed; `description` is what the client is told (an `invalid_client` error_description). */
export class MetadataDocumentFetchError extends Error {
  override readonly name = 'MetadataDocumentFetchError';

  constructor(
    readonly description: string,
    options?: { cause?: unknown },
  ) {
    super(description, options);
  }
}

/** A document fetched within the limits (HTTP 200). */
export interface FetchedDocument {
  readonly body: Buffer;
  /** The response headers oidc-provider reads: `cache-control` and `expires` bound its cache (section 5.2), `content-type`. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface MetadataDocumentFetchOptions {
  /** Every connection passes it: no loopback, link-local, cloud metadata or private address unless an operator allows one. */
  egressGuard: EgressGuard;
  /**
   * Certificates (PEM) trusted instead of the system's for the document
   * servers: tests serve documents with a certificate they made. Production
   * leaves it out.
   */
  trustedCertificates?: readonly string[];
  /** Default {@link METADATA_DOCUMENT_LIMITS}.timeoutMs; tests shorten it. */
  timeoutMs?: number;
}

const agents = new WeakMap<EgressGuard, Agent>();

const TLS_FAILURE = /^(CERT_|ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

/** What the client is told about a failed connection or exchange. */
function describeFailure(url: URL, error: unknown): MetadataDocumentFetchError {
  if (error instanceof MetadataDocumentFetchError) return error;
  const refusal = findEgressRefusal(error);
  if (refusal !== undefined) {
    const subject = refusal.host === refusal.address ? `${refusal.host} is` : `${refusal.host} resolves to`;
    return new MetadataDocumentFetchError(
      `client metadata document refused: ${subject} ${refusal.reason}, which this server does not connect to`,
      { cause: error },
    );
  }
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new MetadataDocumentFetchError(`client metadata document host ${url.hostname} does not resolve`, {
      cause: error,
    });
  }
  if (typeof code === 'string' && TLS_FAILURE.test(code)) {
    return new MetadataDocumentFetchError(
      `client metadata document server ${url.host} does not present a trusted TLS certificate`,
      { cause: error },
    );
  }
  return new MetadataDocumentFetchError(
    `client metadata document could not be fetched from ${url.host}${typeof code === 'string' ? ` (${code})` : ''}`,
    { cause: error },
  );
}

/**
 * A GET of a client's metadata document, within the limits: https only,
 * every connection through the egress guard (the document's URL is chosen
 * by whoever starts an authorization request: draft section 8.6, server-side
 * request forgery), no redirect followed (section 5: the document is served
 * at its URL with HTTP 200, so a redirect is a refusal), at most
 * `maxBytes`, within `timeoutMs` in all. A refusal rejects with
 * {@link MetadataDocumentFetchError}, whose description says why.
 */
export function createMetadataDocumentFetcher(
  options: MetadataDocumentFetchOptions,
): (url: string) => Promise<FetchedDocument> {
  const { egressGuard, trustedCertificates } = options;
  const timeoutMs = options.timeoutMs ?? METADATA_DOCUMENT_LIMITS.timeoutMs;
  const { maxBytes } = METADATA_DOCUMENT_LIMITS;
  let agent = agents.get(egressGuard);
  if (agent === undefined) {
    agent = egressAgents(egressGuard).httpsAgent;
    agents.set(egressGuard, agent);
  }
  const guardedAgent = agent;

  return (url) =>
    new Promise<FetchedDocument>((resolve, reject) => {
      const target = URL.parse(url);
      if (target === null || target.protocol !== 'https:') {
        reject(new MetadataDocumentFetchError('client metadata document URL must be an https URL'));
        return;
      }
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      const fail = (error: unknown) => settle(() => reject(describeFailure(target, error)));
      const exchange = request(target, {
        method: 'GET',
        agent: guardedAgent,
        headers: { accept: 'application/json' },
        ...(trustedCertificates === undefined ? {} : { ca: [...trustedCertificates] }),
      });
      const timer = setTimeout(() => {
        fail(
          new MetadataDocumentFetchError(
            `client metadata document took longer than ${timeoutMs / 1000} s to fetch from ${target.host}`,
          ),
        );
        exchange.destroy();
      }, timeoutMs);
      exchange.on('error', fail);
      exchange.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const refuse = (description: string) => {
          fail(new MetadataDocumentFetchError(description));
          exchange.destroy();
        };
        if (status >= 300 && status < 400) {
          refuse(`client metadata document is redirected (HTTP ${status}); redirects are not followed`);
          return;
        }
        if (status !== 200) {
          refuse(`client metadata document answered HTTP ${status}, not 200`);
          return;
        }
        const tooLarge = `client metadata document too large (more than ${maxBytes} bytes)`;
        if (Number(response.headers['content-length'] ?? 0) > maxBytes) {
          refuse(tooLarge);
          return;
        }
        const chunks: Buffer[] = [];
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) refuse(tooLarge);
          else chunks.push(chunk);
        });
        response.on('error', fail);
        response.on('end', () => {
          const headers: Record<string, string> = {};
          for (const name of ['cache-control', 'expires', 'content-type']) {
            const value = response.headers[name];
            if (typeof value === 'string') headers[name] = value;
          }
          settle(() => resolve({ body: Buffer.concat(chunks), headers }));
        });
      });
      exchange.end();
    });
}
