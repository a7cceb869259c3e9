import type { ClientPolicy } from '@mcpgw/config';
import type { EgressGuard, Logger } from '@mcpgw/core';
import type { Configuration } from 'oidc-provider';
import { clientMetadataRules } from './client-metadata-rules.js';
import { createMetadataDocumentFetcher, METADATA_DOCUMENT_LIMITS } from './metadata-document-fetch.js';
import { metadataDocumentFeature } from './metadata-document-feature.js';
import { metadataDocumentTrust } from './metadata-document-trust.js';
import type { RegisteredClientStore } from './registered-client-store.js';
import { registrationFeature } from './registration-policy.js';

export interface ClientPolicyOptions {
  /** The gateway's egress policy: every metadata document fetch connects through it. */
  egressGuard: EgressGuard;
  /** The tenant's registered clients (store): counted against `registration.maxClients`. */
  registeredClients: RegisteredClientStore;
  logger: Logger;
  now?: () => number;
  /**
   * Enterprise-managed authorization is on (`authorizationServer.enterpriseManaged`):
   * clients may also have the JWT bearer grant (RFC 7523), and such a
   * client authenticates at the token endpoint.
   */
  jwtBearerGrant?: boolean;
  /** Certificates (PEM) trusted instead of the system's for metadata document servers: tests only. */
  trustedCertificates?: readonly string[];
  /** The metadata document fetch's time limit (default 2 s): tests shorten it. */
  fetchTimeoutMs?: number;
}

/**
 * The part of a tenant authorization server's oidc-provider configuration
 * that decides which clients it accepts (MCP authorization, "Client
 * Registration": metadata documents first, dynamic registration as the
 * fallback), for the core to merge into its configuration:
 *
 * - `features.clientIdMetadataDocument` and `fetch`: the tenant's trust
 *   policy, and the fetch through the egress guard and the limits
 *   (metadata-document-feature.ts); off: not advertised, never fetched.
 * - `features.registration`: RFC 7591 per `clients.registration`
 *   (registration-policy.ts).
 * - `extraClientMetadata`, `clientDefaults`, `clientAuthMethods`: public
 *   clients with `authorization_code` and `refresh_token` only, redirect
 *   URIs https or loopback (client-metadata-rules.ts).
 * - `pkce`: required of every client (OAuth 2.1 section 4.1.1; S256 is
 *   oidc-provider 9's only method).
 *
 * The provider it goes into also needs {@link attachClientPolicy} (redirect
 * URI matching, use of registered clients).
 */
export function clientPolicyConfiguration(policy: ClientPolicy, options: ClientPolicyOptions): Partial<Configuration> {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const jwtBearerGrant = options.jwtBearerGrant ?? false;
  const fetchDocument = createMetadataDocumentFetcher({
    egressGuard: options.egressGuard,
    ...(options.trustedCertificates === undefined ? {} : { trustedCertificates: options.trustedCertificates }),
    ...(options.fetchTimeoutMs === undefined ? {} : { timeoutMs: options.fetchTimeoutMs }),
  });
  const metadataDocuments = metadataDocumentFeature({
    trust: metadataDocumentTrust(policy.metadataDocuments),
    fetchDocument,
    logger,
    now,
  });

  return {
    features: {
      // Off: not advertised (no `client_id_metadata_document_supported`), and a URL client_id is just an unknown client.
      clientIdMetadataDocument: policy.metadataDocuments === 'off' ? { enabled: false } : metadataDocuments.feature,
      registration: registrationFeature(policy.registration, options.registeredClients, logger),
    },
    // Whatever oidc-provider fetches goes through the egress guard and the limits.
    fetch: metadataDocuments.fetch,
    fetchResponseBodyLimits: { 'client_id metadata document': METADATA_DOCUMENT_LIMITS.maxBytes },
    extraClientMetadata: clientMetadataRules(jwtBearerGrant),
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    clientAuthMethods: jwtBearerGrant
      ? ['none', 'private_key_jwt', 'client_secret_basic', 'client_secret_post']
      : ['none'],
    pkce: { required: () => true },
  };
}
