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
export { decodePercentPrefix, normalizePrefixes } from './uri-prefixes.js';
export type { GatewayErrorCode } from './errors.js';
export { GatewayError, invalidPosition, isGatewayError } from './errors.js';
export type { SourceContext, SourceFactory, UriSpace } from './source-factory.js';
export type { StandardIssue, StandardResult, StandardSchemaV1 } from './standard-schema.js';
export type { Logger } from './logger.js';
export { silentLogger } from './logger.js';
export type { AccessScope } from './access-scope.js';
export { unrestrictedScope } from './access-scope.js';
export type { Principal } from './principal.js';
export { bytesToContents, isTextLike } from './contents.js';
export { ASYMMETRIC_ALGORITHMS } from './algorithms.js';
