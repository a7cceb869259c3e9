import { once } from 'node:events';
import { type IncomingMessage, request as httpRequest } from 'node:http';
// By package name, not './mcp-http.js': benchmarks load this file on Node's type stripping.
import { MODERN_META } from '@mcpgw/test-helpers/mcp-http';

/**
 * A raw `subscriptions/listen` client over real HTTP (MCP 2026-07-28,
 * basic/patterns/subscriptions): POSTs the request with the transport's
 * headers and parses the SSE response as it arrives, so a test can wait for
 * the next message, count keep-alive comments and see the stream end.
 */
export interface ListenStream {
  readonly status: number;
  readonly headers: Headers;
  /** Set when the answer was JSON (a refusal), not a stream. */
  readonly body: unknown;
  /** Every JSON-RPC message received so far, in order. */
  readonly messages: Record<string, unknown>[];
  /** SSE comment lines received so far (keep-alives). */
  readonly comments: number;
  /** The next message after the `index`-th (default: the next not yet awaited); rejects after `timeoutMs` or at the end. */
  next(timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves once `count` comments have arrived. */
  waitForComments(count: number, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ended the response (not when `close` aborted it). */
  readonly ended: Promise<void>;
  /** Aborts the request: the client goes away. */
  close(): void;
}

export async function openListen(
  endpoint: string,
  notifications: Record<string, unknown>,
  options: { headers?: Record<string, string>; id?: string | number } = {},
): Promise<ListenStream> {
  // node:http with a connection of its own (no pool): closing the stream closes exactly its socket.
  const payload = JSON.stringify({
    jsonrpc: '2.0',
    id: options.id ?? 1,
    method: 'subscriptions/listen',
    params: { _meta: MODERN_META, notifications },
  });
  const request = httpRequest(endpoint, {
    method: 'POST',
    agent: false,
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
      ...options.headers,
    },
  });
  request.end(payload);
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === 'string') responseHeaders.set(name, value);
  }
  let aborted = false;
  const messages: Record<string, unknown>[] = [];
  let comments = 0;
  let finished = false;
  let failure: Error | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const isStream = (response.headers['content-type'] ?? '').startsWith('text/event-stream');
  let body: unknown;
  let ended: Promise<void>;
  if (!isStream) {
    let text = '';
    for await (const chunk of response) text += String(chunk);
    body = JSON.parse(text);
    finished = true;
    ended = Promise.resolve();
  } else {
    ended = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      try {
        for await (const chunk of response as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let split: number;
          while ((split = buffer.indexOf('\n\n')) !== -1) {
            const event = buffer.slice(0, split);
            buffer = buffer.slice(split + 2);
            const data: string[] = [];
            for (const line of event.split('\n')) {
              if (line.startsWith(':')) comments += 1;
              else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
            }
            if (data.length > 0) messages.push(JSON.parse(data.join('\n')) as Record<string, unknown>);
          }
          wake();
        }
      } catch (error) {
        failure = error as Error;
      } finally {
        finished = true;
        wake();
      }
      if (failure !== undefined && !aborted) throw failure;
      // A response cut short (the server dropped it) ends without its last event.
      if (!response.complete && !aborted) throw new Error('the stream was cut off');
    })();
    ended.catch(() => undefined);
  }
  let awaited = 0;
  const until = (ready: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (ready()) return done(resolve);
        if (finished) return done(() => reject(new Error(`the stream ended before ${what}`)));
      };
      const timer = setTimeout(() => done(() => reject(new Error(`no ${what} within ${timeoutMs} ms`))), timeoutMs);
      const done = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });
  return {
    status: response.statusCode ?? 0,
    headers: responseHeaders,
    body,
    messages,
    get comments() {
      return comments;
    },
    async next(timeoutMs = 5000) {
      const index = awaited;
      await until(() => messages.length > index, timeoutMs, `message #${index + 1}`);
      awaited = index + 1;
      return messages[index]!;
    },
    waitForComments: (count, timeoutMs = 5000) => until(() => comments >= count, timeoutMs, `${count} comments`),
    ended,
    close: () => {
      aborted = true;
      request.destroy();
    },
  };
}
