import type { z } from 'zod';
import type { AdminExample } from './admin-examples.js';

/**
 * Who may call a route: anyone (`public`: the OpenAPI document and its
 * page), platform operators only (`operator`), or an admin of the tenant the
 * path names and operators (`tenant`; the path has a `{tenantId}`).
 */
export type AdminRouteAccess = 'public' | 'operator' | 'tenant';

/** One response a route can give, for the OpenAPI document. */
export interface AdminResponseSpec {
  readonly description: string;
  readonly schema?: z.ZodType;
  /** The response carries an ETag (RFC 9110 section 8.8.3). */
  readonly etag?: boolean;
  /** Not JSON: the media type (e.g. `text/html`). */
  readonly mediaType?: string;
  /** Example answers, by name, for the OpenAPI document. */
  readonly examples?: Readonly<Record<string, AdminExample>>;
}

/** See AdminOperation.nameInBody. */
export interface NameInBody {
  readonly field: string;
  /** Drop the member once it agreed (the stored document does not hold it). */
  readonly strip: boolean;
  readonly applies?: (body: Record<string, unknown>) => boolean;
}

/** How the request's conditional headers apply to a route, for the OpenAPI document. */
export type ConditionalHeaders = 'if-match-required' | 'if-match-or-if-none-match' | 'if-match-optional';

/**
 * One admin API operation as clients see it: its method and path, who may
 * call it, what it takes and what it answers. A route of the admin API's
 * table is one of these with a handler; the OpenAPI document lists them.
 */
export interface AdminOperation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to `/admin/v1`, OpenAPI style: `/tenants/{tenantId}/sources/{name}`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly access: AdminRouteAccess;
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  readonly conditional?: ConditionalHeaders;
  /**
   * The body member that repeats the path's `{name}` (an issuer's `issuer`,
   * a source's `id`, a grant's `name`): the path is the name, so the member
   * may be left out (filled in from the path, or dropped when `strip`) and,
   * when given, must agree (422 pointing at it). `applies` limits the rule
   * to some bodies (not the development issuer, whose body names nothing).
   */
  readonly nameInBody?: NameInBody;
  /** Example request bodies, by name, for the OpenAPI document (a test sends each through the API). */
  readonly examples?: Readonly<Record<string, AdminExample>>;
  readonly responses: Readonly<Record<number, AdminResponseSpec>>;
}
