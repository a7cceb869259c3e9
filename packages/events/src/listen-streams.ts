import { GatewayError } from '@mcpgw/core';

/** The caps on open listen streams of one replica (docs/configuration.md); 0 is no cap, except `total`. */
export interface ListenStreamLimits {
  readonly perPrincipal: number;
  readonly perTenant: number;
  readonly total: number;
}

/** What the registry asks of an open stream. */
export interface OpenStream {
  /** Writes an SSE comment (the idle stream's keep-alive). */
  keepAlive(): void;
  /** Ends the stream on the server's initiative: the graceful completion, then close. */
  complete(): void;
}

/** One reserved place; `release()` exactly once, when the stream closes (idempotent). */
export interface StreamSlot {
  /** The stream that holds the place, once it is open (it then gets keep-alives and shutdown). */
  attach(stream: OpenStream): void;
  release(): void;
}

export interface ListenStreams {
  /**
   * Reserves a place for a new stream of `tenantId` held by `principalKey`,
   * or throws MCPGW_LISTEN_LIMIT naming the cap it would exceed.
   */
  reserve(tenantId: string, principalKey: string): StreamSlot;
  /** Streams open (or reserved) on this replica; of one tenant when given. */
  count(tenantId?: string): number;
  /** Completes every open stream (shutdown); later reservations are refused. */
  completeAll(): void;
}

/**
 * The open listen streams of one replica: their counts against the caps, and
 * one keep-alive timer for all of them (running only while any is open), so
 * an idle stream costs no timer of its own.
 */
export function createListenStreams(options: {
  limits: ListenStreamLimits;
  keepAliveMs: number;
  /** Told of every stream opened; the returned function when it closes (the `mcpgw_listen_streams` gauge). */
  opened?: () => () => void;
}): ListenStreams {
  const { limits } = options;
  const streams = new Set<OpenStream>();
  const byTenant = new Map<string, number>();
  const byPrincipal = new Map<string, number>();
  let total = 0;
  let closing = false;
  let ticker: NodeJS.Timeout | undefined;

  const bump = (map: Map<string, number>, key: string, delta: number) => {
    const next = (map.get(key) ?? 0) + delta;
    if (next === 0) map.delete(key);
    else map.set(key, next);
  };
  const refuse = (what: string) => new GatewayError('MCPGW_LISTEN_LIMIT', what);

  const tick = () => {
    for (const stream of streams) stream.keepAlive();
  };

  return {
    reserve(tenantId, principalKey) {
      if (closing) throw refuse('the gateway is shutting down');
      // The principal key is tenant-scoped: the same subject at two tenants is two callers.
      const principal = `${tenantId}\u0000${principalKey}`;
      if (total >= limits.total) throw refuse(`at most ${limits.total} on this replica`);
      if (limits.perTenant > 0 && (byTenant.get(tenantId) ?? 0) >= limits.perTenant) {
        throw refuse(`at most ${limits.perTenant} for this tenant`);
      }
      if (limits.perPrincipal > 0 && (byPrincipal.get(principal) ?? 0) >= limits.perPrincipal) {
        throw refuse(`at most ${limits.perPrincipal} per caller`);
      }
      total += 1;
      bump(byTenant, tenantId, 1);
      bump(byPrincipal, principal, 1);
      const closed = options.opened?.();
      let held: OpenStream | undefined;
      let released = false;
      return {
        attach(stream) {
          if (released) return;
          held = stream;
          streams.add(stream);
          if (ticker === undefined) {
            ticker = setInterval(tick, options.keepAliveMs);
            ticker.unref();
          }
        },
        release() {
          if (released) return;
          released = true;
          total -= 1;
          bump(byTenant, tenantId, -1);
          bump(byPrincipal, principal, -1);
          closed?.();
          if (held !== undefined) streams.delete(held);
          if (streams.size === 0 && ticker !== undefined) {
            clearInterval(ticker);
            ticker = undefined;
          }
        },
      };
    },
    count: (tenantId) => (tenantId === undefined ? total : (byTenant.get(tenantId) ?? 0)),
    completeAll() {
      closing = true;
      for (const stream of [...streams]) stream.complete();
    },
  };
}
