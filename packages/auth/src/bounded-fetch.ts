import { findEgressRefusal } from '@mcpgw/core';

/** Every request to an identity provider gives up after this long. */
export const FETCH_TIMEOUT_MS = 5_000;

/** Why a call to an identity provider failed; internal (logged, never public). */
export class UpstreamError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamError';
  }
}

export interface BoundedFetchOptions {
  readonly fetch: typeof fetch;
  /** Bytes of body read at most; a larger answer is refused, not truncated. */
  readonly maxBytes: number;
  /** Aborts the call (the verifier's close(), or a caller going away). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Fetches a JSON document with a 5 s timeout and a size cap, so a slow or
 * hostile endpoint can neither hold a request nor exhaust memory. Redirects
 * are refused: the configured URL is the one trusted. Returns the status and
 * the parsed body (`undefined` when the body is not JSON).
 */
export async function fetchJson(
  url: string,
  init: RequestInit,
  options: BoundedFetchOptions,
): Promise<{ status: number; body: unknown }> {
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  let response: Response;
  try {
    response = await options.fetch(url, {
      ...init,
      signal,
      redirect: 'error',
      headers: { accept: 'application/json', ...init.headers },
    });
  } catch (cause) {
    // An egress refusal says what to change; the log is the operator's.
    const refused = findEgressRefusal(cause);
    throw new UpstreamError(timeout.aborted ? 'timed out' : (refused?.message ?? 'request failed'), { cause });
  }
  try {
    const text = await readBounded(response, options.maxBytes);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  } catch (cause) {
    if (cause instanceof UpstreamError) throw cause;
    throw new UpstreamError(timeout.aborted ? 'timed out reading the response' : 'response failed', { cause });
  }
}

async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new UpstreamError(`response larger than ${maxBytes} bytes`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new UpstreamError(`response larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
