import type { ClientMetadata, Configuration } from 'oidc-provider';
import { errors } from '../oidc-provider-module.js';
import { redirectUriProblem, type ApplicationType } from './redirect-uri-rules.js';

/** RFC 7523 section 2.1: the JWT bearer grant of enterprise-managed authorization (an ID-JAG). */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The grant types a client of this server may have (OAuth 2.1: no implicit, no password). */
export function allowedGrantTypes(jwtBearerGrant: boolean): string[] {
  return ['authorization_code', 'refresh_token', ...(jwtBearerGrant ? [JWT_BEARER_GRANT] : [])];
}

/**
 * The token endpoint authentication methods of a client that redeems
 * assertions: RFC 7523 section 3.1 lets the assertion stand in for client
 * authentication, but an identity assertion grant is bound to an
 * authenticated client (its `client_id` claim), so such a client is a
 * confidential one.
 */
const CONFIDENTIAL_METHODS = new Set(['private_key_jwt', 'client_secret_basic', 'client_secret_post']);

/**
 * Metadata that makes this server fetch a URL the registrant chose, when it
 * registers and later: none of this server's clients needs one
 * (`sector_identifier_uri`: no pairwise subjects; `request_uris`: no request
 * objects by reference).
 */
const FETCHED_URI_METADATA = ['sector_identifier_uri', 'request_uris'] as const;

/** Why `metadata` is refused, as an RFC 7591 section 3.2.2 error description, or undefined. */
export function clientMetadataProblem(metadata: ClientMetadata, jwtBearerGrant: boolean): string | undefined {
  const grantTypes = Array.isArray(metadata.grant_types) ? (metadata.grant_types as unknown[]) : [];
  const allowed = allowedGrantTypes(jwtBearerGrant);
  const refusedGrant = grantTypes.find((grant) => typeof grant !== 'string' || !allowed.includes(grant));
  if (refusedGrant !== undefined) {
    return `grant_types may contain only ${allowed.join(', ')}, not ${JSON.stringify(refusedGrant)}`;
  }

  const method = metadata.token_endpoint_auth_method ?? 'none';
  const redeemsAssertions = jwtBearerGrant && grantTypes.includes(JWT_BEARER_GRANT);
  if (method !== 'none' && !(redeemsAssertions && CONFIDENTIAL_METHODS.has(method))) {
    return (
      `token_endpoint_auth_method must be "none", not ${JSON.stringify(method)}: this server accepts public clients, ` +
      'which prove themselves with PKCE (RFC 7636), not with a secret'
    );
  }
  if (metadata.jwks_uri !== undefined && !(redeemsAssertions && method === 'private_key_jwt')) {
    return 'jwks_uri is accepted only for a client that authenticates with private_key_jwt';
  }
  for (const field of FETCHED_URI_METADATA) {
    if (metadata[field] !== undefined) return `${field} is not supported by this authorization server`;
  }

  const applicationType: ApplicationType = metadata.application_type === 'native' ? 'native' : 'web';
  const redirectUris = Array.isArray(metadata.redirect_uris) ? (metadata.redirect_uris as unknown[]) : [];
  for (const uri of redirectUris) {
    // Not a string: oidc-provider's own validation says so.
    const problem = typeof uri === 'string' ? redirectUriProblem(uri, applicationType) : undefined;
    // A description starting with "redirect_uris" makes oidc-provider answer invalid_redirect_uri (RFC 7591 section 3.2.2).
    if (problem !== undefined) return `redirect_uris: ${problem}`;
  }
  return undefined;
}

/**
 * `extraClientMetadata`: runs {@link clientMetadataProblem} on every client
 * a registration request (RFC 7591) creates and on every client read from a
 * metadata document (its `client_id` is an https URL). Listing
 * `redirect_uris`, a standard property, is what makes oidc-provider call the
 * validator for every client (it calls it once per listed property, with
 * the whole metadata). Clients of the provider's own configuration and
 * clients read back from the store are not judged again: they were when
 * they came in.
 */
export function clientMetadataRules(jwtBearerGrant: boolean): NonNullable<Configuration['extraClientMetadata']> {
  return {
    properties: ['redirect_uris'],
    validator(ctx, key, _value, metadata) {
      if (key !== 'redirect_uris') return;
      const fromDocument = typeof metadata.client_id === 'string' && /^https:\/\//i.test(metadata.client_id);
      if (ctx === undefined && !fromDocument) return;
      const problem = clientMetadataProblem(metadata, jwtBearerGrant);
      if (problem !== undefined) throw new errors.InvalidClientMetadata(problem);
    },
  };
}
