export { createCatalog } from './catalog.js';
export type { Catalog, CatalogOptions } from './catalog.js';
