/**
 * A `fetch` for the official client's transport that records every HTTP
 * exchange it makes, so an end-to-end test can check each response the
 * gateway sent against the revision's schema.json, including
 * exchanges the client handles silently (the `notifications/initialized`
 * POST, a GET for a server stream).
 */
import { validateResponseBody } from './wire-schema.js';
import type { WireRevision } from './wire-schema.js';

/** One request the client sent and what the gateway answered. */
export interface RecordedExchange {
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  /** The JSON-parsed request body, the raw text if it is not JSON, undefined if none. */
  requestBody: unknown;
  status: number;
  /** Lower-case names. */
  responseHeaders: Record<string, string>;
  responseContentType: string | null;
  /** The raw response body ('' when empty). */
  responseText: string;
}

export interface RecordingFetch {
  /** Pass as `fetch` in `StreamableHTTPClientTransport` options. */
  fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
  /** Every exchange so far, in the order requests were sent. */
  readonly exchanges: readonly RecordedExchange[];
  /** Forgets what was recorded (e.g. between tests sharing a client). */
  clear(): void;
  /**
   * Resolves with the first exchange, recorded already or still to come, that
   * `matches`: the client sends some requests in the background (after the
   * initialize era's handshake, a GET for a server stream), and a test must
   * not have them land in the next test. Rejects after `limitMs` (default 5 s).
   */
  exchange(matches: (exchange: RecordedExchange) => boolean, limitMs?: number): Promise<RecordedExchange>;
}

/** Wraps `base` (the global fetch by default), recording each exchange once its body has arrived. */
export function createRecordingFetch(base: typeof fetch = globalThis.fetch): RecordingFetch {
  const exchanges: RecordedExchange[] = [];
  /** Waiting `exchange` calls, told of each exchange as it is recorded. */
  const waiters = new Set<(recorded: RecordedExchange) => void>();
  const record = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(url, init);
    const requestText = init?.body === undefined || init.body === null ? undefined : await request.clone().text();
    const response = await base(request);
    // The gateway answers with one JSON document, never a stream, so reading a
    // clone to the end here is bounded; the client still reads the original.
    const responseText = await response.clone().text();
    const recorded: RecordedExchange = {
      method: request.method,
      url: request.url,
      requestHeaders: Object.fromEntries(request.headers),
      requestBody: requestText === undefined ? undefined : parseJson(requestText),
      status: response.status,
      responseHeaders: Object.fromEntries(response.headers),
      responseContentType: response.headers.get('content-type'),
      responseText,
    };
    exchanges.push(recorded);
    for (const waiter of [...waiters]) waiter(recorded);
    return response;
  };
  return {
    fetch: record,
    exchanges,
    clear: () => {
      exchanges.length = 0;
    },
    exchange: (matches, limitMs = 5_000) => {
      const found = exchanges.find(matches);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = (recorded: RecordedExchange) => {
          if (!matches(recorded)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(recorded);
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching HTTP exchange within ${limitMs} ms`));
        }, limitMs);
        waiters.add(waiter);
      });
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Checks every recorded exchange against the wire rules a schema can judge,
 * returning one line per problem (empty: all valid):
 * - a POSTed request (it has an `id`) gets `application/json` with a JSON-RPC
 *   response whose body validates against `revision` for its method;
 * - a POSTed notification gets 202 with no body (2026-07-28 and 2025-11-25
 *   transports: "the server MUST return HTTP status code 202 Accepted with no body");
 * - any other response that has a body (e.g. a 405 to GET) must itself be a
 *   valid JSON-RPC error response.
 */
export function wireProblems(exchanges: readonly RecordedExchange[], revision: WireRevision): string[] {
  const problems: string[] = [];
  exchanges.forEach((exchange, index) => {
    const label = `#${index} ${exchange.method} ${describeRequest(exchange.requestBody)} -> ${exchange.status}`;
    const found = problemsOf(exchange, revision);
    for (const problem of found) problems.push(`${label}: ${problem}\n    body: ${truncate(exchange.responseText)}`);
  });
  return problems;
}

function problemsOf(exchange: RecordedExchange, revision: WireRevision): string[] {
  const body = exchange.requestBody;
  const isMessage = typeof body === 'object' && body !== null && !Array.isArray(body) && 'method' in body;
  if (exchange.method === 'POST' && isMessage && !('id' in body)) {
    return exchange.status === 202 && exchange.responseText === ''
      ? []
      : [`a notification must be answered 202 with no body`];
  }
  if (exchange.responseText === '') {
    return exchange.method === 'POST' ? ['a request was answered with an empty body'] : [];
  }
  const problems: string[] = [];
  if (!isJsonMediaType(exchange.responseContentType)) {
    problems.push(`content-type ${exchange.responseContentType ?? '(none)'} is not application/json`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(exchange.responseText) as unknown;
  } catch {
    return [...problems, 'the body is not JSON'];
  }
  const method = isMessage ? String((body as { method: unknown }).method) : '(no request message)';
  return [...problems, ...validateResponseBody(revision, method, parsed)];
}

function isJsonMediaType(contentType: string | null): boolean {
  return contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

function describeRequest(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '(no body)';
  const { method, params } = body as { method?: unknown; params?: { uri?: unknown; cursor?: unknown } };
  const detail = typeof params?.uri === 'string' ? ` ${params.uri}` : params?.cursor === undefined ? '' : ' (cursor)';
  return `${String(method)}${detail}`;
}

function truncate(text: string, max = 400): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
