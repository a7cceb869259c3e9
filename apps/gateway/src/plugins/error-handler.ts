import type { FastifyError, FastifyInstance } from 'fastify';
import { ErrorCode, McpError, errorResponse, internalError, invalidRequest, parseError } from '@mcpgw/protocol';
import { noteRpcResponse } from './request-log.js';

/**
 * Maps what Fastify rejects before our handler runs (body parsing, limits,
 * content type) to JSON-RPC errors with the right HTTP status, so every
 * response of an MCP endpoint is a JSON-RPC message a client can act on.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const mcpError = mapFrameworkError(error);
    if (mcpError.code === ErrorCode.InternalError) {
      request.log.error({ err: error }, 'unhandled error');
    }
    const response = errorResponse(null, mcpError);
    noteRpcResponse(request, response.body);
    return reply.code(response.status).type('application/json').send(response.body);
  });
}

function mapFrameworkError(error: FastifyError): McpError {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return parseError('the body is not valid JSON');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidRequest('The body is empty: send one JSON-RPC request');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return invalidRequest('The body is larger than the 1 MiB limit', 413);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalidRequest(
        'Content-Type must be application/json',
        error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 415 : 400,
      );
    default:
      if (error instanceof SyntaxError) return parseError('the body is not valid JSON');
      if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
        return invalidRequest(error.message, error.statusCode);
      }
      return new McpError(ErrorCode.InternalError, internalError(error).message, { httpStatus: 500, cause: error });
  }
}
