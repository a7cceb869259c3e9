import { fetchJson, UpstreamError } from './bounded-fetch.js';

const MAX_INTROSPECTION_BYTES = 64 * 1024;

export interface IntrospectionClient {
  readonly endpoint: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/**
 * Asks an RFC 7662 endpoint about a token. The gateway authenticates with
 * client_secret_basic (RFC 6749 section 2.3.1: id and secret are
 * form-urlencoded before base64). Returns the parsed answer; throws
 * {@link UpstreamError} when the endpoint fails, times out (5 s) or answers
 * something that is not an RFC 7662 response, so an outage is never mistaken
 * for an answer.
 */
export async function introspectToken(
  token: string,
  client: IntrospectionClient,
  http: { fetch: typeof fetch; signal?: AbortSignal | undefined },
): Promise<Record<string, unknown>> {
  const basic = Buffer.from(`${formEncode(client.clientId)}:${formEncode(client.clientSecret)}`).toString('base64');
  const { status, body } = await fetchJson(
    client.endpoint,
    {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    },
    { ...http, maxBytes: MAX_INTROSPECTION_BYTES },
  );
  if (status !== 200) throw new UpstreamError(`introspection endpoint answered HTTP ${status}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new UpstreamError('introspection answer is not a JSON object');
  }
  const answer = body as Record<string, unknown>;
  // RFC 7662 section 2.2: "active" is REQUIRED and a boolean.
  if (typeof answer.active !== 'boolean') throw new UpstreamError('introspection answer has no boolean "active"');
  return answer;
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
