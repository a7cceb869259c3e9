/**
 * Who answers a problem type: the admin API's routes (`api`), or the
 * browser sign-in and its session (`sign-in`, docs/admin-sign-in.md), whose
 * bodies also carry the type's name as the `code` extension member
 * (RFC 9457 section 3.2).
 */
export type AdminProblemSurface = 'api' | 'sign-in';

/** One problem type of the admin surface (RFC 9457 section 3.1): what a client can match on. */
export interface AdminProblemDefinition {
  /** RFC 9457 section 3.1.2: the one HTTP status this type is answered with. */
  readonly status: number;
  /** RFC 9457 section 3.1.3: the same for every occurrence of the type. */
  readonly title: string;
  readonly surface: AdminProblemSurface;
  /** When it is answered; docs/admin-api.md ("Problems") says it for clients. */
  readonly when: string;
}

/**
 * Every problem type `/admin/v1` answers, its sign-in's included, in the one
 * namespace `urn:mcpgw:admin:problem:` (after the MCP side's error registry,
 * docs/adr/0005-error-registry.md). A test fails when a type is missing from
 * docs/admin-api.md ("Problems"), documented with another status or title,
 * documented but not here, or here but answered nowhere.
 */
export const adminProblemRegistry = {
  'invalid-request': {
    status: 400,
    title: 'The request is malformed',
    surface: 'api',
    when: 'malformed JSON, a bad query parameter or cursor, If-None-Match other than *',
  },
  unauthenticated: {
    status: 401,
    title: 'Authentication required',
    surface: 'api',
    when: 'no token, or a token no issuer here accepts for this resource (WWW-Authenticate says which)',
  },
  forbidden: {
    status: 403,
    title: 'Not allowed',
    surface: 'api',
    when: 'a valid token without an admin role; a tenant admin on an operator-only route, source type or setting',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    surface: 'api',
    when: 'no such tenant (or not one you administer), entity, client, grant or route; a tenant without browser sign-in',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    surface: 'api',
    when: 'it exists already (a tenant id, a name created concurrently)',
  },
  'precondition-failed': {
    status: 412,
    title: 'Precondition failed',
    surface: 'api',
    when: 'If-Match does not name the current version, or If-None-Match: * and it exists',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    surface: 'api',
    when: 'a body that is not application/json',
  },
  'validation-failed': {
    status: 422,
    title: 'The request content is invalid',
    surface: 'api',
    when: "the body's shape, or the tenant the write would produce, breaks a rule",
  },
  'precondition-required': {
    status: 428,
    title: 'Precondition required',
    surface: 'api',
    when: 'changing or deleting without If-Match',
  },
  'too-many-requests': {
    status: 429,
    title: 'Too many requests',
    surface: 'api',
    when: 'a rate limit, by client address or by caller; with Retry-After',
  },
  'server-fault': {
    status: 500,
    title: 'Internal server error',
    surface: 'api',
    when: 'an unexpected failure; the cause is logged, never returned',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    surface: 'api',
    when: 'load shedding while the event loop is late; with Retry-After',
  },
  'session-required': {
    status: 401,
    title: 'Sign-in required',
    surface: 'sign-in',
    when: 'GET session without a session cookie',
  },
  'session-invalid': {
    status: 401,
    title: 'Session invalid or expired',
    surface: 'sign-in',
    when: "a session cookie that does not open, has expired or ended, or whose issuer is no longer the tenant's",
  },
  'csrf-refused': {
    status: 403,
    title: 'Cross-site request refused',
    surface: 'sign-in',
    when: "a state-changing request by session without the session's CSRF token, or from another origin",
  },
  'sign-in-failed': {
    status: 400,
    title: 'Sign-in failed',
    surface: 'sign-in',
    when: "the callback's state is not this browser's, there is no code, or the code exchange failed",
  },
  'identity-provider-unavailable': {
    status: 502,
    title: 'Identity provider unavailable',
    surface: 'sign-in',
    when: "the identity provider's discovery metadata cannot be read or is unusable",
  },
  'not-an-admin': {
    status: 403,
    title: 'Not an admin of this tenant',
    surface: 'sign-in',
    when: "signed in, but the access token is not an admin's of this tenant",
  },
} as const satisfies Record<string, AdminProblemDefinition>;

/** A problem type of the admin surface. */
export type AdminProblemType = keyof typeof adminProblemRegistry;

/** The problem types one surface answers with (the sign-in answers the API's `not-found` too). */
export type ProblemTypeOf<S extends AdminProblemSurface> = {
  [K in AdminProblemType]: (typeof adminProblemRegistry)[K]['surface'] extends S ? K : never;
}[AdminProblemType];

/** The one namespace of the admin surface's problem types: the API's and its browser sign-in's. */
export const PROBLEM_TYPE_PREFIX = 'urn:mcpgw:admin:problem:';

/** RFC 9457 section 3.1.1: a URI identifying the problem type (not dereferenced). */
export const problemTypeUri = (type: AdminProblemType): string => `${PROBLEM_TYPE_PREFIX}${type}`;
