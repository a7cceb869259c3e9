import type { Source } from '@mcpgw/core';
import { GatewayError } from '@mcpgw/core';

export interface UnavailableSourceOptions {
  readonly id: string;
  /** The configured type (`files`, `postgres`, …). */
  readonly kind: string;
  /** Where its URIs lie (its type's `uriSpace`): reads of them fail instead of being "not found". */
  readonly prefixes: readonly string[];
  /** Why it failed to open, for operators (the health probe's detail); never sent to MCP clients. */
  readonly reason: string;
}

/**
 * A source that failed to open, standing in its place in the tenant's new
 * runtime. The rest of the configuration (grants, issuers, other sources) is
 * served as committed: a broken backend must never keep a revoked grant
 * alive by keeping the previous runtime. Listings skip it and name it in
 * `dev.mcpgw/unavailableSources`, as they do any source whose backend fails
 * (docs/protocol.md, "Partial listings"); a read of one of its URIs is
 * MCPGW_SOURCE_UNAVAILABLE (-32603), never an empty or stale answer.
 * `ttlMs` 0: nothing it answers is kept.
 */
export function createUnavailableSource(options: UnavailableSourceOptions): Source {
  const { id, kind, prefixes } = options;
  const failure = () => new GatewayError('MCPGW_SOURCE_UNAVAILABLE', `Source "${id}" is unavailable`);
  return {
    id,
    kind,
    ttlMs: { list: 0, read: 0 },
    async listResources() {
      throw failure();
    },
    async listTemplates() {
      throw failure();
    },
    owns: (uri) => prefixes.some((prefix) => uri.startsWith(prefix)),
    async read() {
      throw failure();
    },
    async health() {
      return { ok: false, detail: `failed to start: ${options.reason}` };
    },
    async close() {},
  };
}
