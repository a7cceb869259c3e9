/**
 * The one modern `_meta` of the tests: every 2026-07-28 request carries the
 * protocol version and the client's capabilities in `params._meta`
 * (MCP 2026-07-28, basic/index, "_meta").
 */
export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/**
 * One 2026-07-28 request over real HTTP, with the headers the transport
 * requires (MCP-Protocol-Version, Mcp-Method, and Mcp-Name for reads, in the
 * base64 sentinel form so any URI fits in a header).
 */
export interface McpHttpResult<Body> {
  status: number;
  headers: Headers;
  /** The raw body, for "never contains" assertions. */
  text: string;
  body: Body;
}

export async function mcpPost<Body = Record<string, unknown>>(
  endpoint: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<McpHttpResult<Body>> {
  const uri = params.uri;
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof uri === 'string' ? { 'mcp-name': `=?base64?${Buffer.from(uri).toString('base64')}?=` } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params: { ...params, _meta: MODERN_META } }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as Body };
}
