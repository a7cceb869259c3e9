import type { Agent as HttpAgent, ClientRequestArgs } from 'node:http';
import { Agent as HttpsAgent, type RequestOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import type { EgressGuard } from './egress-guard.js';
import { nodeHttp } from './node-http.js';

/** The SDK's own agent defaults (NodeHttpHandler): keep-alive, 50 sockets per host. */
const AGENT_OPTIONS = { keepAlive: true, maxSockets: 50 };

/**
 * Checks a connection's host before it is opened: an address literal is
 * judged here (sockets skip `lookup` for one), a name by the guard's lookup
 * once resolved. A refusal fails the request like a connection error, so
 * nothing is sent.
 */
function guardedConnection<O extends ClientRequestArgs>(
  guard: EgressGuard,
  options: O,
  callback: ((err: Error | null, stream: Duplex) => void) | undefined,
  open: (options: O) => Duplex | null | undefined,
): Duplex | null | undefined {
  try {
    guard.checkHost(options.hostname ?? options.host ?? 'localhost');
  } catch (error) {
    process.nextTick(() => callback?.(error as Error, undefined as unknown as Duplex));
    return undefined;
  }
  return open({ ...options, lookup: guard.lookup });
}

/**
 * HTTP and HTTPS agents whose connections pass `guard` at connect time, for
 * clients built on node:http (the S3 SDK of a source a tenant admin
 * configured, the admin sign-in's token request to a tenant admin's issuer).
 */
export function egressAgents(guard: EgressGuard): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
  const httpAgent = new (class extends nodeHttp.Agent {
    override createConnection(options: ClientRequestArgs, callback?: (err: Error | null, stream: Duplex) => void) {
      return guardedConnection(guard, options, callback, (guarded) => super.createConnection(guarded, callback));
    }
  })(AGENT_OPTIONS);
  const httpsAgent = new (class extends HttpsAgent {
    override createConnection(options: RequestOptions, callback?: (err: Error | null, stream: Duplex) => void) {
      return guardedConnection(guard, options, callback, (guarded) => super.createConnection(guarded, callback));
    }
  })(AGENT_OPTIONS);
  return { httpAgent, httpsAgent };
}
