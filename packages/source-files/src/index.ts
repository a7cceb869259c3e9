// The public surface of @mcpgw/source-files: the source type apps/gateway
// registers. Tests reach the other modules by path (../src/<module>.js).

/** The `files` source type: a folder on disk as resources. */
export { filesSourceFactory } from './files-source-factory.js';
