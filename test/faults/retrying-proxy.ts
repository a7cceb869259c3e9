import { Agent, type IncomingMessage, type Server, createServer, request } from 'node:http';

/**
 * A tiny round-robin reverse proxy on 127.0.0.1 that behaves like the
 * compose stack's Caddy (infra/caddy/Caddyfile, `lb_try_duration 5s`,
 * `lb_try_interval 250ms`): a request whose upstream refuses the connection,
 * drops it before answering, or answers 503 (a Fastify closing with
 * `return503OnClosing`) is tried again on the next upstream until `tryForMs`
 * has passed. Only for idempotent test traffic: it replays the request body.
 */
export interface RetryingProxy {
  readonly url: string;
  /** Requests answered by each upstream, by its index. */
  readonly answered: number[];
  /** Attempts that failed (refused, reset, 503) and were tried again. */
  retries(): number;
  close(): Promise<void>;
}

interface Upstream {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

export async function startRetryingProxy(
  upstreamPorts: number[],
  options: { tryForMs?: number; tryIntervalMs?: number } = {},
): Promise<RetryingProxy> {
  const tryForMs = options.tryForMs ?? 5_000;
  const tryIntervalMs = options.tryIntervalMs ?? 250;
  // Kept-alive upstream connections, as a real proxy keeps them: a replica that closes an idle
  // one under us shows up as a reset, which is retried like a refusal.
  const agent = new Agent({ keepAlive: true });
  const answered = upstreamPorts.map(() => 0);
  let retries = 0;
  let next = 0;

  const forward = (port: number, incoming: IncomingMessage, body: Buffer): Promise<Upstream> =>
    new Promise((resolve, reject) => {
      const outgoing = request(
        { host: '127.0.0.1', port, method: incoming.method, path: incoming.url, headers: incoming.headers, agent },
        (response) => {
          readBody(response).then(
            (text) => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: text }),
            reject,
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const server: Server = createServer((incoming, reply) => {
    void (async () => {
      const body = await readBody(incoming);
      const deadline = Date.now() + tryForMs;
      let last: Upstream | undefined;
      for (let attempt = 0; ; attempt += 1) {
        const index = next++ % upstreamPorts.length;
        try {
          const answer = await forward(upstreamPorts[index]!, incoming, body);
          if (answer.status !== 503) {
            answered[index]! += 1;
            reply.writeHead(answer.status, answer.headers).end(answer.body);
            return;
          }
          last = answer;
        } catch {
          last = undefined;
        }
        retries += 1;
        if (Date.now() >= deadline) break;
        // Every upstream failed once in this round: wait before the next round, as Caddy does.
        // eslint-disable-next-line local/no-bare-sleep -- the stand-in proxy's own retry interval (lb_try_interval), not a test waiting
        if ((attempt + 1) % upstreamPorts.length === 0) await new Promise((r) => setTimeout(r, tryIntervalMs));
      }
      if (last !== undefined) reply.writeHead(last.status, last.headers).end(last.body);
      else reply.writeHead(502).end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    retries: () => retries,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
