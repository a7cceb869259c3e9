// The public surface of @mcpgw/core: the shared types and helpers every other
// package builds on. Tests reach the other modules by path (../src/<module>.js).

/** MCP resource shapes (MCP 2026-07-28, server resources, data types): descriptors, templates, contents. */
export type { ResourceContents, ResourceDescriptor, ResourceTemplateDescriptor } from './resource.js';
/** A bounded cache's Map: least recently used evicted first, nothing moved on a hit. */
export { RecencyMap } from './recency-map.js';
/** One shared copy of equal immutable values many principals carry (scope lists, client ids, grant names). */
export { InternedValues, internStringList } from './interned-values.js';
/** HTML for server-rendered pages: the `markup` template escapes every value that is not itself markup. */
export { escapeHtml, isMarkup, markup, markupText, trustedMarkup } from './markup.js';
export type { Markup, MarkupValue } from './markup.js';
/** A CommonJS driver loaded when first used, so a deployment without it does not load it. */
export { loadOnFirstUse } from './load-on-first-use.js';
/** Immutable values that carry their own JSON text, so serving them again costs no serialization. */
/** The Source interface every source package implements, with its paging, change, health and TTL types. */
export type {
  BackendIdentity,
  Page,
  PageRequest,
  Source,
  SourceCaller,
  SourceChange,
  SourceHealth,
  SourceTtlMs,
  VisibleUri,
} from './source.js';
/** The `ttlMs` a source gets when it declares none. */
export { DEFAULT_SOURCE_TTL_MS } from './source.js';
/** The gateway's typed error, carrying a registry code; invalidPosition is the one cursor failure. */
export { GatewayError, invalidPosition, isGatewayError, type GatewayErrorOptions } from './errors.js';
/** The error registry: each code's JSON-RPC code, HTTP status and public message. */
export { errorDefinition, errorRegistry, type ErrorDefinition, type GatewayErrorCode } from './error-registry.js';
/** The JSON-RPC error codes the gateway emits (JSON-RPC 2.0 section 5.1 and MCP's own). */
export { JsonRpcErrorCode, type JsonRpcErrorCodeValue } from './json-rpc-error-codes.js';
/** How a source type plugs in: its factory, the context it is created with, its URI space, its options' model. */
export type { SourceContext, SourceFactory, SourceModel, SourceUrlOption, UriSpace } from './source-factory.js';
/** The Standard Schema interface a factory's options schema implements. */
export type { StandardSchemaV1 } from './standard-schema.js';
/** The logger interface packages log through, and one that drops everything. */
export { silentLogger, type Logger } from './logger.js';
/** Which URIs a caller may see, and the scope that sees everything. */
export { unrestrictedScope, type AccessScope } from './access-scope.js';
/** The authenticated caller. */
export type { Principal } from './principal.js';
/**
 * Turns fetched bytes into text or blob contents by media type; BLOB_BYTES keeps a blob's bytes for
 * streaming, BLOB_STREAM marks a blob whose bytes are still arriving from the backend.
 */
export {
  BLOB_BYTES,
  BLOB_STREAM,
  bytesToContents,
  isStreamedBlob,
  isTextLike,
  streamedBlobContents,
  type BlobByteStream,
} from './contents.js';
/** Normalizes and decodes the URI prefixes a listing is narrowed to. */
export { decodePercentPrefix, normalizePrefixes } from './uri-prefixes.js';
/** The shape of what a caller's grants reach per literal prefix: subtree, levels, or one URI. */
export { normalizeRanges, rangeAdmits, slashesIn, type ListingRange } from './listing-ranges.js';
/** The JWS algorithms an issuer may sign with (asymmetric only). */
export { ASYMMETRIC_ALGORITHMS } from './algorithms.js';
/** The one change hub sources announce list changes through. */
export { ChangeHub, type ChangeListener, type FingerprintUris } from './change-hub.js';
/** The listener side of a source's change detection, served by its hub (base of the pollers and watchers). */
export { ChangeDetector } from './change-detector.js';
/** Exponential backoff with jitter for reconnecting watchers and pollers. */
export { Backoff } from './backoff.js';
/** A warning that repeats while a backend is down, condensed to one line per doubling of attempts. */
export { CondensedWarning } from './condensed-warning.js';
export { formatBytes } from './format-bytes.js';
export { mediaTypeOf, UNKNOWN_MEDIA_TYPE } from './media-type.js';
export type { ErrorSummary } from './error-summary.js';
/** Why a source could not be reached, classed from its driver's error (the admin API's connection test). */
export { SOURCE_FAILURE_REASONS, sourceFailureReason, type SourceFailureReason } from './source-failure-reason.js';
export { errorSummary } from './error-summary.js';
/**
 * The egress policy for destinations a tenant admin configures (no loopback, link-local, cloud metadata,
 * private, CGNAT, multicast or reserved address unless an operator allows it), checked at connect time.
 */
export {
  createEgressGuard,
  EGRESS_ALLOW_SETTING,
  egressAllowEntryProblem,
  EgressRefusedError,
  findEgressRefusal,
  type EgressGuard,
  type EgressGuardOptions,
} from './egress-guard.js';
/** node:http and node:https agents whose connections pass an egress guard. */
export { egressAgents } from './egress-agents.js';
export { nodeHttp } from './node-http.js';
/** IP address literals in any notation resolvers accept, and which of them are internal. */
export { formatIpAddress, parseIpAddress, type IpAddress } from './ip-address.js';
export { internalAddressKind, type InternalAddressKind } from './internal-addresses.js';
/** The value at a dotted path of nested objects (own properties only): option paths, nested claims. */
export { valueAtPath } from './value-at-path.js';
/** SECRETS_KEY turned into one key per purpose (HKDF, RFC 5869), and the keys of sealed credentials. */
export {
  createServerKeys,
  sealedCredentialKeys,
  sealedSigningKeyKeys,
  type ServerKeys,
  type ServerKeysOptions,
} from './server-keys.js';
/** A JSON Pointer (RFC 6901) from a path of keys and indexes: the admin API's field errors point with it. */
export { jsonPointer } from './json-pointer.js';
/** The one bus replicas learn of change by (ADR 12): its interface, the in-process bus of one replica, the text frame. */
export { checkTopic, createInProcessReplicaBus, type ReplicaBus, type ReplicaBusListener } from './replica-bus.js';
export { decodeBusFrame, encodeBusFrame } from './replica-bus-frame.js';
/** Leases keeping a piece of work on one replica (change detection, the control-plane relay). */
export type { LeaseHandlers, Leases } from './leases.js';
