/**
 * Protocol revisions the gateway speaks. The modern era carries its version
 * in every request's `_meta` (spec 2026-07-28 basic/versioning); the legacy
 * era negotiates it once with `initialize` (spec 2025-11-25 basic/lifecycle).
 */
export const MODERN_VERSIONS = ['2026-07-28'] as const;
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

export type ModernVersion = (typeof MODERN_VERSIONS)[number];
export type LegacyVersion = (typeof LEGACY_VERSIONS)[number];

/** Every version we serve, newest first: what `data.supported` lists. */
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...LEGACY_VERSIONS];

/** The newest legacy revision: our answer to an `initialize` asking for one we do not know. */
export const LATEST_LEGACY_VERSION: LegacyVersion = LEGACY_VERSIONS[0];

/**
 * "A server that supports clients implementing protocol versions earlier than
 * 2025-06-18 ... MAY treat a request that omits the header as protocol version
 * 2025-03-26" (2026-07-28 transports, Protocol Version Header).
 */
export const HEADERLESS_LEGACY_VERSION: LegacyVersion = '2025-03-26';

export function isModernVersion(value: string): value is ModernVersion {
  return (MODERN_VERSIONS as readonly string[]).includes(value);
}

export function isLegacyVersion(value: string): value is LegacyVersion {
  return (LEGACY_VERSIONS as readonly string[]).includes(value);
}
