// The public surface of @mcpgw/catalog: what apps/gateway uses.

/** Merges a tenant's sources into one paginated, access-scoped resource service. */
export { createCatalog, type Catalog } from './catalog.js';
