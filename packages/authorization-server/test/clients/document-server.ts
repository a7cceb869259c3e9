/**
 * An https server on loopback serving client metadata documents (and the
 * abuses of one) with a certificate made for the test; the names it answers
 * for reach it through the egress guard's injected resolver (harness.ts).
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { selfSignedCertificate } from './self-signed-certificate.js';

export type Route = (request: IncomingMessage, response: ServerResponse) => void;

export interface DocumentServer {
  port: number;
  /** The certificate (PEM) to trust. */
  cert: string;
  /** Serves `path` with `route`. */
  route(path: string, route: Route): void;
  /** Requests received per path. */
  requests: Map<string, number>;
  close(): Promise<void>;
}

export async function startDocumentServer(names: readonly string[]): Promise<DocumentServer> {
  const certificate = selfSignedCertificate(names);
  const routes = new Map<string, Route>();
  const requests = new Map<string, number>();
  const server: Server = createServer({ cert: certificate.cert, key: certificate.key }, (request, response) => {
    const path = request.url ?? '/';
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (route === undefined) {
      response.writeHead(404).end();
      return;
    }
    route(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cert: certificate.cert,
    route: (path, route) => routes.set(path, route),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A route answering `document` as JSON, with `headers`. */
export function json(document: unknown, headers: Record<string, string> = {}): Route {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(document));
  };
}
