// The public surface of @mcpgw/catalog: what apps/gateway uses.

/** Merges a tenant's sources into one paginated, access-scoped resource service. */
export { createCatalog, type Catalog } from './catalog.js';
/** Stands in for a source that failed to open: listed as unavailable, its reads fail. */
export { createUnavailableSource, type UnavailableSourceOptions } from './unavailable-source.js';
