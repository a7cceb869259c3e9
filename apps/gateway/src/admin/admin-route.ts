import type { GatewayCache } from '@mcpgw/cache';
import type { ControlPlaneStore, WriteContext } from '@mcpgw/control-plane';
import type { TenantConfig } from '@mcpgw/config';
import type { EgressGuard, Logger, Principal, SourceFactory } from '@mcpgw/core';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { TenantRegistry, TenantRuntime } from '@mcpgw/tenancy';
import type { AdminExample } from './admin-examples.js';
import type { AdminPrincipal } from './admin-principal.js';
import type { WritePreconditions } from './etag.js';

/**
 * Who may call a route: anyone (`public`: the OpenAPI document and its
 * page), platform operators only (`operator`), or an admin of the tenant the
 * path names and operators (`tenant`; the path has a `{tenantId}`).
 */
export type AdminRouteAccess = 'public' | 'operator' | 'tenant';

/** What the admin routes work with. */
export interface AdminDeps {
  readonly store: ControlPlaneStore;
  readonly tenants: TenantRegistry<TenantRuntime>;
  readonly cache: GatewayCache;
  /** The bootstrap file's rules for one tenant (GatewayConfig.validateTenant). */
  readonly validateTenant: (entry: unknown, origin: string) => Promise<TenantConfig>;
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  /** Where relative paths in source options resolve (the bootstrap file's folder). */
  readonly configDir: string;
  /** The egress policy (EGRESS_ALLOW) sources a tenant admin wrote are opened under. */
  readonly egress: EgressGuard;
  readonly logger: Logger;
  /** An MCP caller's fingerprint within a tenant (the preview names the previewed caller with it). */
  readonly tenantFingerprint: (tenantId: string, principal: Principal) => string;
  /** Every route served, for the OpenAPI document. */
  readonly routes: () => readonly AdminRoute[];
}

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

/** What a handler gets: the caller and its validated input. */
export interface AdminCall<P, Q, B> {
  /** Absent only on public routes. */
  readonly principal: AdminPrincipal | undefined;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  readonly preconditions: WritePreconditions;
  readonly request: FastifyRequest;
  /** Aborted when the client goes away before the answer is sent: long work (the preview) stops then. */
  readonly signal: AbortSignal;
  readonly deps: AdminDeps;
  /** Who is writing, from where: every store write takes it (the audit log records it). */
  readonly writeContext: WriteContext;
}

/** What a handler answers; `etag` becomes the ETag header. */
export interface AdminResult {
  readonly status: number;
  readonly body?: unknown;
  readonly etag?: string;
  readonly mediaType?: string;
}

/** See AdminRoute.nameInBody. */
export interface NameInBody {
  readonly field: string;
  /** Drop the member once it agreed (the stored document does not hold it). */
  readonly strip: boolean;
  readonly applies?: (body: Record<string, unknown>) => boolean;
}

/** How the request's conditional headers apply to a route, for the OpenAPI document. */
export type ConditionalHeaders = 'if-match-required' | 'if-match-or-if-none-match' | 'if-match-optional';

/**
 * One admin API operation: a row of the route table. Routes are plain
 * objects, so a module adds one by putting it in the table
 * (`createAdminRouteTable`), and the OpenAPI document lists every row.
 */
export interface AdminRoute<
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
  handler(call: AdminCall<z.output<P>, z.output<Q>, z.output<B>>): Promise<AdminResult>;
}

/** Types a route's handler by its schemas. */
export const defineAdminRoute = <P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  route: AdminRoute<P, Q, B>,
): AdminRoute => route as unknown as AdminRoute;

/** The routes the admin API serves; another module adds its own with `add` before the app is built. */
export interface AdminRouteTable {
  add(...routes: AdminRoute[]): void;
  list(): readonly AdminRoute[];
}

export function createAdminRouteTable(initial: readonly AdminRoute[] = []): AdminRouteTable {
  const routes: AdminRoute[] = [];
  const table: AdminRouteTable = {
    add(...added) {
      for (const route of added) {
        if (routes.some((existing) => existing.method === route.method && existing.path === route.path)) {
          throw new Error(`admin route ${route.method} ${route.path} is registered twice`);
        }
        if (routes.some((existing) => existing.operationId === route.operationId)) {
          throw new Error(`admin operationId ${route.operationId} is used twice`);
        }
        routes.push(route);
      }
    },
    list: () => routes,
  };
  table.add(...initial);
  return table;
}
