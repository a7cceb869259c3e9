import { createServer } from 'node:net';

/**
 * The one free-port helper: a loopback port the kernel just handed out and
 * released, for a server a test starts that must know its port before it
 * listens (tokens are bound to the gateway's URL, a Redis cluster node is told
 * its own port). Anything that can listen on port 0 should do that instead.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
