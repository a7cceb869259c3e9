/**
 * A loopback HTTP server that misbehaves on purpose (hangs, stalls, fails),
 * for what a real S3 implementation will not do on demand. Requests are
 * path-style: `/{bucket}/{key}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeS3 {
  readonly endpoint: string;
  /** Requests received so far. */
  requests: number;
  /** Requests being answered right now, and the most ever at once. */
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
}

export async function startFakeS3(
  handle: (request: IncomingMessage, response: ServerResponse, bucket: string) => void | Promise<void>,
): Promise<FakeS3> {
  const sockets = new Set<Socket>();
  const state = {
    endpoint: '',
    requests: 0,
    inFlight: 0,
    maxInFlight: 0,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((request, response) => {
    state.requests += 1;
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    let counted = true;
    const done = (): void => {
      if (counted) state.inFlight -= 1;
      counted = false;
    };
    response.once('close', done);
    const bucket = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname.split('/')[1] ?? '');
    void Promise.resolve(handle(request, response, bucket)).catch(() => response.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** Answers like GetObject would, after `delayMs`. */
export function answerObject(response: ServerResponse, body: string, delayMs = 0): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      if (!response.destroyed) {
        response.writeHead(200, {
          'content-type': 'text/plain',
          'content-length': Buffer.byteLength(body),
          etag: '"fake"',
        });
        response.end(body);
      }
      resolve();
    }, delayMs);
    response.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
