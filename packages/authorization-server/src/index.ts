// The public surface of @mcpgw/authorization-server.
export * from './upstream/index.js';
/** The clients a tenant's hosted authorization server accepts (metadata documents, dynamic registration). */
export * from './clients/index.js';
