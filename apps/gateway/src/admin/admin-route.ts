import type { GatewayCache } from '@mcpgw/cache';
import type { ControlPlaneStore, ValidateTenant, WriteContext } from '@mcpgw/control-plane';
import type { EgressGuard, Logger, Principal, SourceFactory } from '@mcpgw/core';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { TenantRegistry, TenantRuntime } from '@mcpgw/tenancy';
import type { AdminOperation, AdminPrincipal, AuthorizationRecords, WritePreconditions } from '@mcpgw/admin';

/** What the admin routes work with. */
export interface AdminDeps {
  readonly store: ControlPlaneStore;
  readonly tenants: TenantRegistry<TenantRuntime>;
  readonly cache: GatewayCache;
  /** The bootstrap file's rules for one tenant (GatewayConfig.validateTenant). */
  readonly validateTenant: ValidateTenant;
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  /** Where relative paths in source options resolve (the bootstrap file's folder). */
  readonly configDir: string;
  /** The egress policy (EGRESS_ALLOW) sources a tenant admin wrote are opened under. */
  readonly egress: EgressGuard;
  readonly logger: Logger;
  /** An MCP caller's fingerprint within a tenant (the preview names the previewed caller with it). */
  readonly tenantFingerprint: (tenantId: string, principal: Principal) => string;
  /** The tenants' hosted authorization server records (connected clients, users' grants); absent: none kept. */
  readonly authorizationRecords?: AuthorizationRecords | undefined;
  /** Every route served, for the OpenAPI document. */
  readonly routes: () => readonly AdminRoute[];
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

/**
 * One admin API operation: a row of the route table, an AdminOperation with
 * its handler. Routes are plain objects, so a module adds one by putting it
 * in the table (`createAdminRouteTable`), and the OpenAPI document lists
 * every row.
 */
export interface AdminRoute<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> extends AdminOperation<P, Q, B> {
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
