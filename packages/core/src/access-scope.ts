import type { ListingRange } from './listing-ranges.js';
import type { SourceCaller } from './source.js';

/**
 * What one caller may see of a tenant's resources: the policy layer computes
 * it from (tenant, verified claims, grants); the catalog applies it to every
 * list and read. The fingerprint is a hash of exactly the inputs the policy
 * used, so two callers with the same effective access share it, and it keys
 * every private cache entry and binds every cursor.
 */
export interface AccessScope {
  readonly fingerprint: string;
  /**
   * A hash of what the caller may see without who the caller is (the tenant
   * and the grants that matched, in full): callers with equal views get
   * byte-identical results. Used only to store such results once; the
   * fingerprint still keys every entry of a caller and binds every cursor.
   * Absent: results are never shared.
   */
  readonly view?: string;
  /**
   * Who the caller is, for sources that answer under a backend identity of
   * their own (`Source.backendIdentity`). Absent (an anonymous tenant): such
   * a source answers as for no caller.
   */
  readonly caller?: SourceCaller;
  /** False when nothing of the source is visible: the catalog then skips it entirely. */
  allowsSource(sourceId: string): boolean;
  /** Whether the URI (owned by that source) is visible to the caller. */
  allows(sourceId: string, uri: string): boolean;
  /**
   * URI prefixes that every URI `allows` admits for the source starts with
   * (the literal starts of the caller's patterns, normalized), or undefined
   * when some pattern has no literal start or the whole source is granted.
   * The catalog passes them to the source as `PageRequest.prefixes`; an
   * empty list means nothing of the source can be visible.
   */
  listingPrefixes?(sourceId: string): readonly string[] | undefined;
  /**
   * The same prefixes as `listingPrefixes`, in the same order, each with
   * the shape of what the caller's patterns reach after it; undefined
   * exactly when `listingPrefixes` is.
   */
  listingRanges?(sourceId: string): readonly ListingRange[] | undefined;
}

/** Full access, for tenants declared anonymous (loopback development only). */
export const unrestrictedScope: AccessScope = {
  fingerprint: 'unrestricted',
  view: 'unrestricted',
  allowsSource: () => true,
  allows: () => true,
};
