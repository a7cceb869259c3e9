/**
 * A loopback TCP proxy to a service (Redis, Postgres) that can make chosen
 * connections half-open: once frozen, what the service sends on them is
 * dropped while both sockets stay open, so neither side sees an error (as
 * when a network path dies silently). A connection is chosen by what its
 * client sent, e.g. `/subscribe/i` for a Redis subscriber or `/LISTEN/` for
 * a Postgres listener.
 */
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export interface FreezingProxy {
  /** `target` with the proxy's host and port: the same credentials, path and query. */
  readonly url: string;
  /** Freezes every connection whose client has sent something matching `sent` so far. */
  freeze(sent: RegExp): void;
  close(): Promise<void>;
}

export async function startFreezingProxy(target: string, defaultPort: number): Promise<FreezingProxy> {
  const upstream = new URL(target);
  const seen = new Map<Socket, string>();
  const frozen = new WeakSet<Socket>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const service = connect(Number(upstream.port || defaultPort), upstream.hostname);
    sockets.add(client).add(service);
    seen.set(client, '');
    client.on('data', (chunk: Buffer) => {
      // Only the start of what a client sent is kept: enough to recognise its role.
      const sent = seen.get(client) ?? '';
      if (sent.length < 4096) seen.set(client, sent + chunk.toString('latin1'));
      service.write(chunk);
    });
    service.on('data', (chunk: Buffer) => {
      if (!frozen.has(client)) client.write(chunk);
    });
    const end = () => {
      seen.delete(client);
      client.destroy();
      service.destroy();
    };
    client.on('error', end).on('close', end);
    service.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    freeze(sent) {
      for (const [socket, text] of seen) if (sent.test(text)) frozen.add(socket);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
