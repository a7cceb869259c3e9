import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { slug } from '@mcpgw/config';
import type { z } from 'zod';
import type { RateLimits } from '../plugins/rate-limit.js';
import type { AdminPrincipal, ProblemFieldError } from '@mcpgw/admin';
import { AdminProblem, jsonPointer, readPreconditions, tenantNotFound, tooManyRequests } from '@mcpgw/admin';
import type { AdminAuthenticator } from './admin-authenticator.js';
import type { AdminDeps, AdminRoute, AdminRouteTable } from './admin-route.js';
import { installAdminErrors } from './admin-errors.js';
import { addressedTenant } from './bearer-authenticator.js';

export interface AdminPluginOptions {
  readonly deps: Omit<AdminDeps, 'routes'>;
  readonly table: AdminRouteTable;
  /** Asked in order; the first to name the caller wins (a bearer token, then a browser session). */
  readonly authenticators: readonly AdminAuthenticator[];
  /** The WWW-Authenticate challenge of a 401 for a request that named no credentials. */
  readonly challenge: (tenantId: string | undefined) => string;
  /** The gateway's rate limits: the admin API's own per address and per principal (RATE_LIMIT_ADMIN_*). */
  readonly rateLimits: Pick<RateLimits, 'checkAdminAddress' | 'checkAdminPrincipal'>;
  /** Keys the per-principal counter, so that no subject is readable in Redis (`ServerKeys.adminPrincipalCounter`). */
  readonly principalKeySecret: Uint8Array;
}

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
async function reportApplied(deps: Omit<AdminDeps, 'routes'>, tenantId: string | undefined, reply: FastifyReply) {
  if (tenantId === undefined) return;
  const stored = await deps.store.getTenant(tenantId);
  if (stored === undefined) return;
  reply.header('mcpgw-revision', String(stored.revision));
  if (stored.status !== 'active') return;
  await deps.tenants.whenApplied(tenantId, stored.revision, APPLY_WAIT_MS);
  const applied = deps.tenants.status(tenantId)?.appliedRevision;
  if (applied !== undefined) reply.header('mcpgw-applied-revision', String(applied));
  const failed = deps.tenants.serving.get(tenantId)?.failedSources;
  if (failed !== undefined && failed.size > 0) {
    reply.header('mcpgw-unavailable-sources', [...failed.keys()].map(encodeURIComponent).join(','));
  }
}

/** A write to a tenant's configuration (not a preview, a connection test or a cache flush). */
const changesConfiguration = (route: AdminRoute): boolean =>
  route.path.includes('{tenantId}') &&
  (route.method === 'PUT' || route.method === 'DELETE' || /\/(suspend|resume)$/.test(route.path));

/** `{name}` (OpenAPI) → `:name` (Fastify). */
const fastifyPath = (path: string): string => path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');

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
function nameFromPath(route: AdminRoute, params: unknown, body: unknown): unknown {
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
function parse<S extends z.ZodType>(
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
 * The admin API (`/admin/v1`, docs/admin-api.md): every route of the table,
 * each behind its access rule. A tenant admin addressing another tenant gets
 * the same 404, byte for byte, as for a tenant that does not exist.
 */
export async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions): Promise<void> {
  const deps: AdminDeps = { ...options.deps, routes: () => options.table.list() };
  installAdminErrors(app);
  // Admin answers are per caller and may change at any write (RFC 9111 section 5.2.2.5).
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  const principalOf = async (request: FastifyRequest): Promise<AdminPrincipal> => {
    for (const authenticator of options.authenticators) {
      const principal = await authenticator.authenticate(request);
      if (principal !== undefined) return principal;
    }
    throw new AdminProblem('unauthenticated', 'Send an access token in the Authorization header (Bearer)', [], {
      'www-authenticate': options.challenge(addressedTenant(request)),
    });
  };

  const principalKey = (principal: AdminPrincipal): string =>
    createHmac('sha256', options.principalKeySecret)
      .update(
        JSON.stringify([
          principal.kind,
          principal.kind === 'tenant-admin' ? principal.tenantId : '',
          principal.issuer,
          principal.subject,
        ]),
      )
      .digest('base64url');

  /**
   * Everything that decides whether a request may run at all, in an
   * `onRequest` hook: before Fastify reads or parses the body, so an
   * anonymous caller's body (malformed, or past the body limit) costs
   * nothing and is answered 401, not 400 or 413. The address limit comes
   * first, before any token is verified; the caller's own limit once it is known.
   */
  const admit = async (route: AdminRoute, request: FastifyRequest): Promise<AdminPrincipal | undefined> => {
    const byAddress = await options.rateLimits.checkAdminAddress(request);
    if (byAddress !== undefined) throw tooManyRequests(byAddress);
    if (route.access === 'public') return undefined;
    const principal = await principalOf(request);
    if (route.access === 'operator' && principal.kind !== 'operator') {
      throw new AdminProblem('forbidden', 'Only platform operators may do this');
    }
    const tenantId = addressedTenant(request);
    if (route.access === 'tenant' && principal.kind === 'tenant-admin' && principal.tenantId !== tenantId) {
      throw tenantNotFound();
    }
    const byPrincipal = await options.rateLimits.checkAdminPrincipal(request, principalKey(principal));
    if (byPrincipal !== undefined) throw tooManyRequests(byPrincipal);
    return principal;
  };
  const admitted = new WeakMap<FastifyRequest, AdminPrincipal>();

  const serve = (route: AdminRoute) => async (request: FastifyRequest, signal: AbortSignal) => {
    const principal = admitted.get(request);
    // Admission ran in onRequest; a non-public route never gets here without a principal.
    if (route.access !== 'public' && principal === undefined) throw new Error('admin request not admitted');
    // A tenant id that is not a slug names no tenant: the same 404 as any missing one.
    if (route.path.includes('{tenantId}') && !slug.safeParse(addressedTenant(request)).success) throw tenantNotFound();
    const params = parse(route.params, request.params, 'parameter');
    const query = parse(route.query, request.query, 'parameter');
    if (route.body !== undefined && (request.body === undefined || request.body === null)) {
      throw new AdminProblem('invalid-request', 'This operation needs a JSON body (Content-Type: application/json)');
    }
    const body = parse(route.body, nameFromPath(route, params, request.body), 'pointer');
    return route.handler({
      principal,
      params,
      query,
      body,
      preconditions: readPreconditions(request),
      request,
      signal,
      deps,
      writeContext: {
        // Public routes (the API's own description) never write; their context is never used.
        actor:
          principal === undefined
            ? { kind: 'operator', subject: '(public route)' }
            : { kind: principal.kind, subject: principal.subject, issuer: principal.issuer },
        clientAddress: request.ip,
      },
    });
  };

  for (const route of options.table.list()) {
    const handle = serve(route);
    app.route({
      method: route.method,
      url: fastifyPath(route.path),
      // Shed like the MCP endpoint while the event loop is late (plugins/load-shedding.ts).
      config: { loadShed: true },
      onRequest: async (request) => {
        const principal = await admit(route, request);
        if (principal !== undefined) admitted.set(request, principal);
      },
      handler: async (request, reply) => {
        // The response's 'close' before it finished is the client leaving. (The request's own 'close' is
        // no such sign: Node emits it as soon as the body has been read.)
        const gone = new AbortController();
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
        const result = await handle(request, gone.signal);
        if (result.etag !== undefined) reply.header('etag', result.etag);
        if (changesConfiguration(route) && result.status < 300) {
          await reportApplied(deps, addressedTenant(request), reply);
        }
        reply.code(result.status);
        if (result.body === undefined) return reply.send();
        return reply.type(result.mediaType ?? 'application/json').send(result.body);
      },
    });
  }
}
