import { GatewayError } from '@mcpgw/core';

const MAX_URI_LENGTH = 8192;
/** RFC 3986 scheme followed by ':'. */
const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** Reads the optional `cursor` param of a list request. An empty string is a valid cursor (pagination spec). */
export function readCursorParam(params: Record<string, unknown>): string | undefined {
  const { cursor } = params;
  if (cursor === undefined || cursor === null) return undefined;
  if (typeof cursor !== 'string') throw new GatewayError('MCPGW_PARAMS_INVALID', '"cursor" must be a string');
  return cursor;
}

/** Reads and validates the `uri` param of `resources/read` ("Servers MUST validate all resource URIs"). */
export function readUriParam(params: Record<string, unknown>): string {
  const { uri } = params;
  if (typeof uri !== 'string' || uri.length === 0) {
    throw new GatewayError('MCPGW_PARAMS_INVALID', '"uri" is required and must be a non-empty string');
  }
  if (uri.length > MAX_URI_LENGTH || !URI_SCHEME.test(uri)) {
    throw new GatewayError('MCPGW_PARAMS_INVALID', '"uri" is not a valid absolute URI', {
      data: { uri: uri.slice(0, MAX_URI_LENGTH) },
    });
  }
  return uri;
}
