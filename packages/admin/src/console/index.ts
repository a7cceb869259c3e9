// The admin console's pages (docs/admin-console.md): server-rendered HTML, every value escaped by core's `markup`.
export { jsonChanges } from './json-diff.js';
export type { JsonChange } from './json-diff.js';
export { CONSOLE_PREFIX, consoleReturnPath, signInPath, TENANT_PAGES, tenantConsolePath } from './console-paths.js';
export type { TenantPage } from './console-paths.js';
export { consolePage } from './console-layout.js';
export { CONSOLE_SCRIPT, CONSOLE_SCRIPT_PATH, CONSOLE_SCRIPT_URL, CONSOLE_SCRIPT_VERSION } from './console-script.js';
export type { ConsoleViewer } from './console-layout.js';
export { field, placeProblem, problemSummary, writeFields } from './form-problem.js';
export type { FieldOf, FormProblem, PlacedProblem } from './form-problem.js';
export { ENTITY_FORMS, nameFieldOf } from './entity-forms.js';
export type { ConsoleCollection, EntityForm, FormFields } from './entity-forms.js';
export { MAX_PASTE_CHARACTERS, previewBodyOf } from './preview-body.js';
export type { PreviewBody, PreviewFieldNames } from './preview-body.js';
export { entityPage } from './entity-page.js';
export type { EntityEditing, EntityPageInput, EntityView } from './entity-page.js';
export { overviewPage } from './overview-page.js';
export type { TenantStatusView } from './overview-page.js';
export type { TrafficMinuteView } from './traffic-charts.js';
export { previewPage } from './preview-page.js';
export type { PreviewSide } from './preview-page.js';
export { AUDIT_FILTERS, auditConsolePage } from './audit-log-page.js';
export type { AuditPageView } from './audit-log-page.js';
export { tenantsPage } from './tenants-page.js';
export type { TenantView } from './tenants-page.js';
export { consoleIndexPage, homePage, problemPage, signedOutPage } from './entry-pages.js';
export { editedGrantWarnings, grantPatternWarnings } from './grant-pattern-warnings.js';
export { grantCheckProblems, grantCheckWarnings } from './grant-check.js';
export type { GrantCheckAnswer, GrantCheckFinding } from './grant-check.js';

export { accessActivityPage, filterAccess } from './access-activity-page.js';
export type { AccessFilters, AccessRecordView } from './access-activity-page.js';
export { callersByGrant } from './grant-callers.js';
export type { GrantCaller } from './grant-callers.js';
export { CLAIMS_CHECK_FIELDS } from './claims-check.js';
export type { ClaimsCheck } from './claims-check.js';
export {
  OPERATOR_CALLBACK_PATH,
  OPERATOR_LOGIN_PATH,
  OPERATOR_SIGN_IN_PATH,
  OPERATOR_SIGN_OUT_PATH,
  operatorSignInPage,
} from './operator-sign-in-page.js';
export type { OperatorIssuerSignIn } from './operator-sign-in-page.js';
export {
  CONFIRM_CONSOLE_CLIENT_FIELD,
  CONNECTED_APPS_ACTIONS,
  connectedAppsPage,
  redirectHostsOf,
} from './connected-apps-page.js';
export type {
  ConnectedAppsAction,
  ConnectedAppsPageInput,
  ConnectedClientView,
  UserGrantView,
} from './connected-apps-page.js';
