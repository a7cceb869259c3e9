/**
 * One `resources/list` POST to a gateway on loopback, as the load loops of
 * the benchmarks send it: a keep-alive agent, the 2026-07-28 headers, and a
 * deadline. Resolves with what came back whatever the status; rejects on a
 * network error or when the deadline cuts the request.
 */
import type { Agent, IncomingHttpHeaders } from 'node:http';
import { request } from 'node:http';

export interface ListAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface ListRequest {
  port: number;
  /** e.g. `/t/acme/mcp` */
  path: string;
  /** The JSON-RPC body, serialized once by the caller. */
  body: string;
  agent: Agent;
  timeoutMs: number;
}

export function postResourcesList({ port, path, body, agent, timeoutMs }: ListRequest): Promise<ListAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'resources/list',
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}
