import type { AccessScope, Principal, Source } from '@mcpgw/core';

/**
 * A source entry of a tenant's configuration, as far as a caller's view
 * depends on it (its type and options decide what a listing or read shows).
 */
export interface ListenedSourceEntry {
  readonly id: string;
  readonly type: string;
  readonly options?: unknown;
}

/**
 * What events and listen streams need of a tenant's serving runtime: its
 * configured sources, the opened sources (for routing a URI as a read
 * does, and for their change feeds), and who may see what. The tenancy
 * layer's runtime satisfies it; this package names no more of it, so it
 * depends on no tenancy code (the tenancy layer may depend on this one).
 */
export interface ListenedTenant {
  readonly config: { readonly sources: readonly ListenedSourceEntry[] };
  readonly catalog: { readonly sources: readonly Source[] };
  /** Absent for an anonymous (loopback development) tenant. */
  readonly auth: { accessOf(principal: Principal): AccessScope | undefined } | undefined;
}
