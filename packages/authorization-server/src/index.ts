// The public surface of @mcpgw/authorization-server.
export * from './upstream/index.js';
