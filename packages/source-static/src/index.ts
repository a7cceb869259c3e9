// The public surface of @mcpgw/source-static: what apps/gateway and other
// packages' tests use. Tests reach the other modules by path (../src/<module>.js).

/** The `static` source type: resources and templates declared inline. */
export { staticSourceFactory } from './static-source-factory.js';
/** Creates a static source from parsed options (the catalog and policy tests build sources with it). */
export { createStaticSource } from './static-source.js';
