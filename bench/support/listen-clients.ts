/**
 * The clients of bench/listen-scale.ts, in a child process of their own:
 * one `subscriptions/listen` stream per bearer token over raw `node:http`
 * keep-alive connections (the official client is far too heavy for ten
 * thousand), driven over IPC:
 *
 *   { open: { url, tokens, concurrency } }  opens one stream per token (at most `concurrency`
 *                                           being opened at a time); answers { opened, refused }
 *   { watch: true }                         forgets what was received; answers { watching }
 *   { report: true }                        answers { received: [stream index, ms][] }, every
 *                                           `list_changed` since `watch` (wall clock, ms)
 *   { close: true }                         closes every stream and exits
 *
 * A stream counts as open once its acknowledgment arrived. Times are
 * `performance.timeOrigin + performance.now()`, comparable with the parent's.
 */
import * as http from 'node:http';

export type ListenClientsRequest =
  | { open: { url: string; tokens: string[]; concurrency: number } }
  | { watch: true }
  | { report: true }
  | { close: true };

export type ListenClientsAnswer =
  | { opened: number; refused: { status: number; body: string }[] }
  | { watching: true }
  | { received: [number, number][] };

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const requests: http.ClientRequest[] = [];
let received: [number, number][] = [];
const now = () => performance.timeOrigin + performance.now();

const body = (id: number) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
      notifications: { resourcesListChanged: true },
    },
  });

/** Opens stream `index`; resolves with undefined once acknowledged, or with the refusal. */
function openOne(url: string, token: string, index: number): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const payload = body(index);
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'subscriptions/listen',
        authorization: `Bearer ${token}`,
        'content-length': Buffer.byteLength(payload),
      },
    });
    requests.push(req);
    req.on('error', (error) => resolve({ status: 0, body: String(error) }));
    req.on('response', (res) => {
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        return;
      }
      let acknowledged = false;
      res.on('data', (chunk: string) => {
        if (!acknowledged) {
          acknowledged = true;
          resolve(undefined);
        }
        // An SSE event is one JSON message per data line; a chunk holds whole events here.
        if (chunk.includes('notifications/resources/list_changed')) received.push([index, now()]);
      });
      res.on('end', () => undefined);
    });
    req.end(payload);
  });
}

async function open(url: string, tokens: string[], concurrency: number): Promise<ListenClientsAnswer> {
  let next = 0;
  let opened = 0;
  const refused: { status: number; body: string }[] = [];
  const worker = async () => {
    while (next < tokens.length) {
      const index = next++;
      const refusal = await openOne(url, tokens[index]!, index);
      if (refusal === undefined) opened += 1;
      else refused.push(refusal);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { opened, refused: refused.slice(0, 5) };
}

process.on('message', (message: ListenClientsRequest) => {
  const answer = (value: ListenClientsAnswer) => process.send?.(value);
  if ('open' in message) {
    void open(message.open.url, message.open.tokens, message.open.concurrency).then(answer);
  } else if ('watch' in message) {
    received = [];
    answer({ watching: true });
  } else if ('report' in message) {
    answer({ received });
  } else {
    for (const req of requests) req.destroy();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
