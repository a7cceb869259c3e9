import { slug } from '@mcpgw/config';
import type { z } from 'zod';
import type { AdminPrincipal, ProblemFieldError, WritePreconditions } from '@mcpgw/admin';
import { AdminProblem, jsonPointer, tenantNotFound } from '@mcpgw/admin';
import type { FastifyRequest } from 'fastify';
import type { AdminDeps, AdminResult, AdminRoute } from './admin-route.js';

// How one admin operation runs once its caller is known: the access rule of its row, its input
// parsed by the row's schemas, its handler, and the revision a write left. The JSON routes
// (admin-plugin.ts) and the console's form routes (console/) both run operations through
// here, so a form is held to exactly the rules an API client is.

/** How long a write's answer waits for this replica to apply the revision it committed. */
export const APPLY_WAIT_MS = 1_000;

/**
 * After a write to a tenant's configuration: the revision it committed (`Mcpgw-Revision`),
 * once this replica has applied it or after APPLY_WAIT_MS, the revision this
 * replica has applied (`Mcpgw-Applied-Revision`), and the sources that failed
 * to start in it and are served as unavailable (`Mcpgw-Unavailable-Sources`,
 * percent-encoded ids; the tenant status says why). A writer sees at once
 * whether what it changed, a revoked grant say, is what this replica serves.
 */
export async function reportApplied(
  deps: Omit<AdminDeps, 'routes'>,
  tenantId: string | undefined,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (tenantId === undefined) return headers;
  const stored = await deps.store.getTenant(tenantId);
  if (stored === undefined) return headers;
  headers['mcpgw-revision'] = String(stored.revision);
  if (stored.status !== 'active') return headers;
  await deps.tenants.whenApplied(tenantId, stored.revision, APPLY_WAIT_MS);
  const applied = deps.tenants.status(tenantId)?.appliedRevision;
  if (applied !== undefined) headers['mcpgw-applied-revision'] = String(applied);
  const failed = deps.tenants.serving.get(tenantId)?.failedSources;
  if (failed !== undefined && failed.size > 0) {
    headers['mcpgw-unavailable-sources'] = [...failed.keys()].map(encodeURIComponent).join(',');
  }
  return headers;
}

/** A write to a tenant's configuration (not a preview, a connection test or a cache flush). */
export const changesConfiguration = (route: AdminRoute): boolean =>
  route.path.includes('{tenantId}') &&
  (route.method === 'PUT' || route.method === 'DELETE' || /\/(suspend|resume)$/.test(route.path));

/** The path to the first string holding U+0000, which Postgres text and jsonb cannot store. */
function nulAt(value: unknown, path: PropertyKey[] = []): PropertyKey[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...path, key];
    const found = nulAt(item, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A union's refusal as the refusals of the alternative the body meant: the
 * one it did not add unknown members to, then the one with fewest complaints
 * (an issuer body with `issuer` is the real-issuer alternative, not the
 * development one). Zod reports the union itself as "Invalid input" at the
 * union's own path, which names no field.
 */
function flattenIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    // An unknown member is the field at fault, not the object holding it.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ ...issue, path: [...path, key], message: 'not a known member here' }));
    }
    if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [{ ...issue, path }];
    const rank = (branch: readonly z.core.$ZodIssue[]) =>
      (branch.some((item) => item.code === 'unrecognized_keys' && item.path.length === 0) ? 1000 : 0) + branch.length;
    const best = [...issue.errors].sort((a, b) => rank(a) - rank(b))[0]!;
    return flattenIssues(best, path);
  });
}

/**
 * The path is an entity's name (AdminRoute.nameInBody): a body that repeats
 * it gets it from the path when left out and is refused when it disagrees.
 */
export function nameFromPath(route: AdminRoute, params: unknown, body: unknown): unknown {
  const rule = route.nameInBody;
  const name = (params as { name?: unknown } | undefined)?.name;
  if (rule === undefined || typeof name !== 'string') return body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  if (rule.applies !== undefined && !rule.applies(record)) return body;
  if (!Object.hasOwn(record, rule.field)) return rule.strip ? body : { ...record, [rule.field]: name };
  if (record[rule.field] !== name) {
    throw new AdminProblem(
      'validation-failed',
      'The path names this entity; the body says otherwise; nothing was changed',
      [
        {
          pointer: jsonPointer([rule.field]),
          detail: `must be ${JSON.stringify(name)} as in the path, or left out`,
        },
      ],
    );
  }
  if (!rule.strip) return body;
  const { [rule.field]: _named, ...rest } = record;
  return rest;
}

/** Parses one part of the request; a refusal names each offending field. */
export function parse<S extends z.ZodType>(
  schema: S | undefined,
  value: unknown,
  where: 'parameter' | 'pointer',
): z.output<S> | undefined {
  if (schema === undefined) return undefined;
  const nul = nulAt(value);
  if (nul !== undefined) {
    const detail = 'must not contain the NUL character';
    throw where === 'pointer'
      ? new AdminProblem('validation-failed', 'The body holds a NUL character', [{ pointer: jsonPointer(nul), detail }])
      : new AdminProblem('invalid-request', 'A parameter holds a NUL character', [
          { parameter: String(nul[0] ?? '(all)'), detail },
        ]);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors: ProblemFieldError[] = flattenIssues(result.error.issues).map((issue) =>
    where === 'pointer'
      ? { pointer: jsonPointer(issue.path), detail: issue.message }
      : { parameter: String(issue.path[0] ?? '(all)'), detail: issue.message },
  );
  throw where === 'pointer'
    ? new AdminProblem('validation-failed', 'The body does not have the expected shape; nothing was changed', errors)
    : new AdminProblem('invalid-request', 'A parameter is invalid', errors);
}

/**
 * Whether `principal` may run `route` on `tenantId` (after authentication): an
 * operator-only route refuses tenant admins with 403; a tenant admin
 * addressing another tenant gets the 404 a missing tenant gets.
 */
export function checkRouteAccess(
  route: AdminRoute,
  principal: AdminPrincipal | undefined,
  tenantId: string | undefined,
): void {
  if (route.access === 'public') return;
  if (principal === undefined) throw new Error('admin request not admitted');
  if (route.access === 'operator' && principal.kind !== 'operator') {
    throw new AdminProblem('forbidden', 'Only platform operators may do this');
  }
  if (route.access === 'tenant' && principal.kind === 'tenant-admin' && principal.tenantId !== tenantId) {
    throw tenantNotFound();
  }
}

/** One run of an operation: its raw input as a request carries it, and who asks. */
export interface OperationInput {
  readonly principal: AdminPrincipal | undefined;
  readonly params: unknown;
  readonly query?: unknown;
  /** The JSON body, before the row's schema (and its name-in-path rule) is applied. */
  readonly body?: unknown;
  readonly preconditions: WritePreconditions;
  readonly request: FastifyRequest;
  readonly signal: AbortSignal;
}

/** What a run answers: the handler's result, and for a configuration write the revision headers. */
export interface OperationOutcome {
  readonly result: AdminResult;
  readonly applied: Readonly<Record<string, string>>;
}

/** The tenant named by an operation's raw path parameters. */
const tenantOfParams = (params: unknown): string | undefined => {
  const value = (params as { tenantId?: unknown } | undefined)?.tenantId;
  return typeof value === 'string' ? value : undefined;
};

/**
 * Runs one row of the route table for an authenticated caller: its access
 * rule, then its schemas, then its handler; a configuration write then waits
 * (up to APPLY_WAIT_MS) for this replica to apply it. Refusals are thrown as
 * the API throws them (AdminProblem, StoreError, TenantWriteRefusal).
 */
export async function runAdminOperation(
  route: AdminRoute,
  deps: AdminDeps,
  input: OperationInput,
): Promise<OperationOutcome> {
  const tenantId = tenantOfParams(input.params);
  checkRouteAccess(route, input.principal, tenantId);
  // A tenant id that is not a slug names no tenant: the same 404 as any missing one.
  if (route.path.includes('{tenantId}') && !slug.safeParse(tenantId).success) throw tenantNotFound();
  const params = parse(route.params, input.params, 'parameter');
  const query = parse(route.query, input.query ?? {}, 'parameter');
  if (route.body !== undefined && (input.body === undefined || input.body === null)) {
    throw new AdminProblem('invalid-request', 'This operation needs a JSON body (Content-Type: application/json)');
  }
  const body = parse(route.body, nameFromPath(route, params, input.body), 'pointer');
  const { principal } = input;
  const result = await route.handler({
    principal,
    params,
    query,
    body,
    preconditions: input.preconditions,
    request: input.request,
    signal: input.signal,
    deps,
    writeContext: {
      // Public routes (the API's own description) never write; their context is never used.
      actor:
        principal === undefined
          ? { kind: 'operator', subject: '(public route)' }
          : { kind: principal.kind, subject: principal.subject, issuer: principal.issuer },
      clientAddress: input.request.ip,
    },
  });
  const applied = changesConfiguration(route) && result.status < 300 ? await reportApplied(deps, tenantId) : {};
  return { result, applied };
}

/** Finds a row of the table by its operationId; the console names operations this way. */
export function operationById(routes: readonly AdminRoute[], operationId: string): AdminRoute {
  const route = routes.find((row) => row.operationId === operationId);
  if (route === undefined) throw new Error(`no admin operation ${operationId}`);
  return route;
}
