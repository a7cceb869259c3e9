import type { EgressGuard } from '@mcpgw/core';
import type { Dispatcher } from 'undici';
import { undici } from './undici-module.js';

const fetches = new WeakMap<EgressGuard, typeof fetch>();

/**
 * A fetch whose connections pass `guard` (an issuer a tenant admin
 * configured: its JWKS, discovery metadata and introspection endpoint). The
 * connector checks an address-literal host itself (sockets skip `lookup` for
 * one) and resolves names through the guard's lookup, so the address
 * actually connected to is the one checked. A refusal rejects the fetch
 * before anything is sent. One dispatcher per guard, shared by every issuer
 * it holds, made on its first fetch: a tenant's runtime makes its fetch when
 * it is built, at start, and undici loads only once an issuer is fetched from.
 */
export function egressFetch(guard: EgressGuard): typeof fetch {
  let guarded = fetches.get(guard);
  if (guarded === undefined) {
    let dispatcher: Dispatcher | undefined;
    // undici's fetch is WHATWG fetch; its types differ from the DOM lib's only in name.
    guarded = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const { fetch: undiciFetch } = undici();
      dispatcher ??= guardedDispatcher(guard);
      return undiciFetch(input as never, { ...(init as object), dispatcher });
    }) as unknown as typeof fetch;
    fetches.set(guard, guarded);
  }
  return guarded;
}

function guardedDispatcher(guard: EgressGuard): Dispatcher {
  const { Agent, buildConnector } = undici();
  const connect = buildConnector({ lookup: guard.lookup });
  return new Agent({
    connect(options, callback) {
      try {
        guard.checkHost(options.hostname);
      } catch (error) {
        callback(error as Error, null);
        return;
      }
      connect(options, callback);
    },
  });
}
