export type {
  Annotations,
  BlobContents,
  Icon,
  ResourceContents,
  ResourceDescriptor,
  ResourceTemplateDescriptor,
  TextContents,
} from './resource.js';
export type { Page, PageRequest, Source, SourceChange, SourceHealth, SourceTtl, VisibleUri } from './source.js';
export { DEFAULT_SOURCE_TTL } from './source.js';
export type { GatewayErrorOptions } from './errors.js';
export { decodePercentPrefix, normalizePrefixes } from './uri-prefixes.js';
export { GatewayError, invalidPosition, isGatewayError } from './errors.js';
export type { ErrorDefinition, GatewayErrorCode } from './error-registry.js';
export { errorDefinition, errorRegistry } from './error-registry.js';
export type { JsonRpcErrorCodeValue } from './json-rpc-error-codes.js';
export { JsonRpcErrorCode } from './json-rpc-error-codes.js';
export type { SourceContext, SourceFactory, UriSpace } from './source-factory.js';
export type { StandardIssue, StandardResult, StandardSchemaV1 } from './standard-schema.js';
export type { Logger } from './logger.js';
export { silentLogger } from './logger.js';
export type { AccessScope } from './access-scope.js';
export { unrestrictedScope } from './access-scope.js';
export type { Principal } from './principal.js';
export { BLOB_BYTES, bytesToContents, isTextLike } from './contents.js';
export { ASYMMETRIC_ALGORITHMS } from './algorithms.js';
export type { ChangeEvent, ChangeHubOptions, ChangeListener, FingerprintUris } from './change-hub.js';
export { ChangeHub } from './change-hub.js';
export type { Fingerprint, FingerprintDiff } from './fingerprint.js';
export { diffFingerprints } from './fingerprint.js';
export type { BackoffOptions } from './backoff.js';
export { Backoff } from './backoff.js';
export { CondensedWarning } from './condensed-warning.js';
