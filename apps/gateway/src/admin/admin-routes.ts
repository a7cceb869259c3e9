import type { AdminRoute } from './admin-route.js';
import { createAdminRouteTable, type AdminRouteTable } from './admin-route.js';
import { auditRoutes } from './routes/audit-routes.js';
import { authorizationRecordRoutes } from './routes/authorization-record-routes.js';
import { authorizationServerRoutes } from './routes/authorization-server-routes.js';
import { docRoutes } from './routes/doc-routes.js';
import { entityRoutes } from './routes/entity-routes.js';
import { operationRoutes } from './routes/operation-routes.js';
import { previewRoutes } from './routes/preview-routes.js';
import { tenantRoutes } from './routes/tenant-routes.js';

/**
 * The admin API's route table: this module's routes, then `extra` (routes of
 * other modules, e.g. a preview). Every row is served and documented.
 */
export function adminRouteTable(serverUrl: string, extra: readonly AdminRoute[] = []): AdminRouteTable {
  return createAdminRouteTable([
    ...docRoutes(serverUrl),
    ...tenantRoutes,
    ...entityRoutes,
    ...authorizationServerRoutes,
    ...authorizationRecordRoutes,
    ...operationRoutes,
    ...previewRoutes,
    ...auditRoutes,
    ...extra,
  ]);
}
