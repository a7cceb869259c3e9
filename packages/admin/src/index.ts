// The admin API's domain (docs/admin-api.md): everything of it that does not need the HTTP framework.

// Problems (RFC 9457): the one registry of the admin surface's problem types, and the
// refusal that carries one.
export { adminProblemRegistry, PROBLEM_TYPE_PREFIX, problemTypeUri } from './problem-registry.js';
export type {
  AdminProblemDefinition,
  AdminProblemSurface,
  AdminProblemType,
  ProblemTypeOf,
} from './problem-registry.js';
export {
  AdminProblem,
  jsonPointer,
  overloaded,
  problemBody,
  problemDocument,
  serverFault,
  tenantNotFound,
} from './problem.js';
export type { ProblemFieldError, ProblemType } from './problem.js';
export { tooManyRequests } from './too-many-requests.js';
export type { LimitRefusal } from './too-many-requests.js';

// Who calls the admin API, how their tokens are checked, and the admin resources those
// tokens name (RFC 8707, RFC 9728).
export type { AdminCredential, AdminPrincipal } from './admin-principal.js';
export { createAdminAccess } from './admin-access.js';
export type {
  AccessTenantRuntime,
  AdminAccess,
  AdminAccessOptions,
  LocalOperatorIssuer,
  SessionAdmin,
  SignedInAdmin,
} from './admin-access.js';
export {
  ADMIN_PREFIX,
  adminResourceMetadataUrl,
  operatorResource,
  tenantAdminResource,
  tenantOfAdminResource,
} from './admin-resources.js';
export { matchesBinding } from './role-bindings.js';

// What the admin domain needs of the tenancy: its runtime and registry, as small interfaces.
export type {
  ServingTenants,
  TenantAdmission,
  TenantAuth,
  TenantAuthOutcome,
  TenantRuntimeLease,
  TenantRuntimeView,
} from './tenant-ports.js';

// A tenant's hosted authorization server: the port to its records (connected clients, users'
// grants), and how its settings and records are shown.
export type {
  AuthorizationRecords,
  ConnectedClient,
  ConnectedClientKind,
  UserGrant,
  UserGrantFilter,
} from './authorization-records.js';
export {
  authorizationServerView,
  oauthClientView,
  oauthGrantView,
  refuseInternalDestinations,
} from './authorization-server-views.js';

// The operations as clients see them: schemas, examples, views, conditional requests
// (RFC 9110 section 13.1).
export type {
  AdminOperation,
  AdminResponseSpec,
  AdminRouteAccess,
  ConditionalHeaders,
  NameInBody,
} from './admin-operation.js';
export {
  adminRoleBindingBody,
  auditEventView,
  auditPage,
  auditQuery,
  authorizationServerBody,
  authorizationServerView as authorizationServerViewSchema,
  connectionTestView,
  createTenantBody,
  entityList,
  entityParams,
  entityViewSchema,
  grantBody,
  issuerBody,
  oauthClientList,
  oauthClientParams,
  oauthClientView as oauthClientViewSchema,
  oauthGrantList,
  oauthGrantParams,
  oauthGrantQuery,
  oauthGrantView as oauthGrantViewSchema,
  problemSchema,
  sourceBody,
  sourceHealthView,
  tenantIdParams,
  tenantList,
  tenantSettingsSchema,
  tenantStatusView,
  tenantViewSchema,
} from './admin-schemas.js';
export {
  adminRoleBindingExamples,
  authorizationServerExamples,
  connectionTestExamples,
  createTenantExamples,
  grantExamples,
  issuerExamples,
  previewExamples,
  sourceExamples,
  tenantSettingsExamples,
} from './admin-examples.js';
export type { AdminExample } from './admin-examples.js';
export { entityView, problemOfStoreError, REDACTED, requireTenant, tenantView, writeOptions } from './admin-views.js';
export { etagOf, readPreconditions } from './etag.js';
export type { WritePreconditions } from './etag.js';

// The operations' own work: a page of the audit log, a tenant's status on this replica,
// a source's connection test, the preview of what a caller would see.
export { auditLogPage } from './audit-page.js';
export type { AuditLogPage } from './audit-page.js';
export { STATUS_PROBE_TIMEOUT_MS, tenantStatusReport } from './tenant-status.js';
export type { StatusRuntime, TenantStatusDeps } from './tenant-status.js';
export { CONNECTION_TEST_TIMEOUT_MS, scrub, testSourceConnection } from './source-connection-test.js';
export type { ConnectionTestDeps, ConnectionTestResult } from './source-connection-test.js';
export { previewRequestSchema, previewResponseSchema, previewWarningSchema } from './preview-schema.js';
export type { PreviewRequest, PreviewResponse, PreviewWarning } from './preview-schema.js';
export { DEFAULT_PATTERN_BUDGET, findUnmatchedPatterns } from './preview-pattern-check.js';
export type { PatternCheckBudget } from './preview-pattern-check.js';
export { previewAs, PreviewInputError } from './preview-as.js';
export type { PreviewOptions } from './preview-as.js';
export { PreviewRefusal, previewTenant } from './preview-tenant.js';
export type { PreviewDeps, PreviewFieldError } from './preview-tenant.js';

// The API's description: the OpenAPI document and its page.
export { openApiDocument } from './openapi-document.js';
export { docsPage } from './docs-page.js';

// Browser sessions: the sealed cookie a signed-in admin carries, and the random ids it names.
/** Seals and opens admin session cookies (AES-256-GCM under the admin-session keys, the first sealing). */
export { createSessionSealer, newCsrfToken, newSessionId } from './admin-session.js';
export { createOperatorSessionSealer } from './operator-session.js';
export type { OperatorSession, OperatorSessionCookie, OperatorSessionSealer } from './operator-session.js';
export type { AdminSession, OpenedSession, SessionSealer } from './admin-session.js';

// The admin console's pages: server-rendered, framework-free.
export * from './console/index.js';
