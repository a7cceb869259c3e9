import { Socket } from 'node:net';
import type { EgressGuard } from '@mcpgw/core';

/**
 * A `pg` stream factory (the `stream` option of a client or pool) for a
 * source a tenant admin configured. node-postgres calls the socket's
 * `connect(port, host)`, or `connect(path)` for a Unix socket; here that
 * connect first passes the egress guard (an address literal, a socket path)
 * and then resolves names through the guard's lookup, so the address
 * actually connected to is the one checked. A refusal fails the connection
 * attempt like a refused connection: nothing is sent.
 */
export function egressStream(guard: EgressGuard): () => Socket {
  return () => {
    const socket = new Socket();
    const connect = socket.connect.bind(socket);
    socket.connect = ((port: number | string, host?: string) => {
      const path = typeof port === 'string' && host === undefined ? port : undefined;
      try {
        guard.checkHost(path ?? host ?? 'localhost');
      } catch (error) {
        process.nextTick(() => socket.destroy(error as Error));
        return socket;
      }
      return connect({ port: Number(port), host: host ?? 'localhost', lookup: guard.lookup });
    }) as Socket['connect'];
    return socket;
  };
}
