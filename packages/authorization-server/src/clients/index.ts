/** Which clients a tenant's authorization server accepts: metadata documents, dynamic registration, their rules. */
export { clientPolicyConfiguration, type ClientPolicyOptions } from './client-policy-configuration.js';
export {
  attachClientPolicy,
  CLIENT_USE_WRITE_INTERVAL_MS,
  type AttachClientPolicyOptions,
} from './attach-client-policy.js';
export type { RegisteredClientStore } from './registered-client-store.js';
export {
  registrationLimitReached,
  sweepUnusedClients,
  unusedClientCutoff,
  type RegistrationPolicy,
} from './registration-policy.js';
export { allowedGrantTypes, clientMetadataProblem, JWT_BEARER_GRANT } from './client-metadata-rules.js';
export { redirectUriMatches, redirectUriProblem, type ApplicationType } from './redirect-uri-rules.js';
export { metadataDocumentTrust, type MetadataDocumentPolicy } from './metadata-document-trust.js';
export { CONNECTOR_PRESET_HOSTS, type ConnectorPreset } from './connector-presets.js';
export {
  createMetadataDocumentFetcher,
  METADATA_DOCUMENT_LIMITS,
  MetadataDocumentFetchError,
  type FetchedDocument,
  type MetadataDocumentFetchOptions,
} from './metadata-document-fetch.js';
export { METADATA_DOCUMENT_CACHE_SECONDS } from './metadata-document-feature.js';
