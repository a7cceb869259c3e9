/**
 * A loopback HTTP proxy that forwards every request unchanged to `target`
 * and records its method and path with query, so a test can count the
 * backend calls a listing made (e.g. ListObjectsV2 is `GET /{bucket}?list-type=2...`).
 * Headers pass through as sent, so request signatures made for the proxy's
 * host still verify at the target. `relay` may take over passing a
 * response's body on (after its status and headers went out), e.g. to cut
 * it short as a broken backend would; by default it is piped through.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface CountingProxy {
  readonly endpoint: string;
  /** `METHOD /path?query` of each request, in arrival order. */
  readonly requests: string[];
  close(): Promise<void>;
}

export interface CountingProxyOptions {
  relay?: (request: IncomingMessage, response: IncomingMessage, outgoing: ServerResponse) => void;
}

export async function startCountingProxy(target: string, options: CountingProxyOptions = {}): Promise<CountingProxy> {
  const upstream = new URL(target);
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((incoming, outgoing) => {
    requests.push(`${incoming.method ?? 'GET'} ${incoming.url ?? '/'}`);
    const forwarded = httpRequest(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        if (options.relay === undefined) response.pipe(outgoing);
        else options.relay(incoming, response, outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
