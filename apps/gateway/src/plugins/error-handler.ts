import fastifyPlugin from 'fastify-plugin';
import type { FastifyError } from 'fastify';
import { GatewayError } from '@mcpgw/core';
import { ErrorCode, errorResponse, readRequestId, toMcpError, wireError } from '@mcpgw/protocol';
import type { McpError } from '@mcpgw/protocol';
import { noteRpcResponse } from '../request-log-fields.js';

/**
 * Maps what Fastify rejects before our handler runs (body parsing, limits,
 * content type), and a streamed response that fails before its first byte,
 * to registry codes, so every response of an MCP endpoint is a JSON-RPC
 * message a client can act on.
 */
export const errorHandlerPlugin = fastifyPlugin(
  async (app) => {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const mcpError = mapFrameworkError(error);
      if (mcpError.code === ErrorCode.InternalError) {
        request.log.error({ code: mcpError.gatewayCode, err: error }, 'unhandled error');
      }
      // Most of these come before the body is read (no id to echo); a streamed result whose backend fails
      // before its first byte comes after, and its error answers the request by its id.
      const response = errorResponse(readRequestId(request.body), mcpError);
      noteRpcResponse(request, response.body);
      return reply.code(response.status).type('application/json').send(response.body);
    });
  },
  { name: 'mcpgw-error-handler' },
);

function mapFrameworkError(error: FastifyError): McpError {
  // A hook's own refusal (load shedding) already names its registry code.
  if (error instanceof GatewayError) return toMcpError(error);
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return wireError('MCPGW_PARSE_ERROR');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return wireError('MCPGW_BODY_EMPTY');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return wireError('MCPGW_BODY_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return wireError('MCPGW_CONTENT_TYPE_UNSUPPORTED');
    default:
      if (error instanceof SyntaxError) return wireError('MCPGW_PARSE_ERROR');
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return wireError('MCPGW_HTTP_REQUEST_INVALID', error.message, { httpStatus: error.statusCode });
      }
      return wireError('MCPGW_SERVER_FAULT', [], { cause: error });
  }
}
