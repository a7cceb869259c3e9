import type { Document, EntityWriteInput, TenantEntityKind } from '@mcpgw/control-plane';
import { checkEntityBody, checkTenantWrite, importEntity, writerOf } from '@mcpgw/control-plane';
import type { z } from 'zod';
import type { AdminCall, AdminRoute } from '../admin-route.js';
import type { AdminExample, NameInBody } from '@mcpgw/admin';
import {
  AdminProblem,
  adminRoleBindingBody,
  adminRoleBindingExamples,
  entityList,
  entityParams,
  entityView,
  entityViewSchema,
  etagOf,
  grantBody,
  grantExamples,
  issuerBody,
  issuerExamples,
  requireTenant,
  sourceBody,
  sourceExamples,
  tenantIdParams,
  writeOptions,
} from '@mcpgw/admin';
import { defineAdminRoute } from '../admin-route.js';

interface KindSpec {
  readonly kind: TenantEntityKind;
  readonly collection: string;
  /** Singular, for operation ids: `Issuer` → `putIssuer`. */
  readonly noun: string;
  readonly body: z.ZodType;
  readonly putDescription: string;
  /** The body member that repeats the path's name, if the kind has one. */
  readonly nameInBody?: NameInBody;
  readonly examples: Readonly<Record<string, AdminExample>>;
  /** Set for a kind with a check operation (`POST …/{name}/check`): what it answers. */
  readonly checkDescription?: string;
}

const KINDS: readonly KindSpec[] = [
  {
    kind: 'issuer',
    collection: 'issuers',
    noun: 'Issuer',
    body: issuerBody,
    examples: issuerExamples,
    putDescription:
      'An identity provider the tenant trusts, as in the bootstrap file. Its name is its `issuer` URL (percent-encoded in the path), or `development`; the body may leave `issuer` out (the path gives it) and, if it has it, it must be the same.',
    // The development issuer's body is `{"development": true}` and names nothing.
    nameInBody: { field: 'issuer', strip: false, applies: (body) => !Object.hasOwn(body, 'development') },
  },
  {
    kind: 'source',
    collection: 'sources',
    noun: 'Source',
    body: sourceBody,
    examples: sourceExamples,
    putDescription:
      "A source, as in the bootstrap file without `id`. Its type's credentials (postgres `connection.password`; s3 `credentials.accessKeyId`, `credentials.secretAccessKey`, `credentials.sessionToken`) go under `secrets` and nowhere else (write-only: sealed at rest, never returned; absent keeps the stored ones, null removes them). Changing the type or where the credentials are sent (host, port, database, URL, endpoint, region, bucket) needs `secrets` again. An `id`, if given, must be the name in the path.",
    nameInBody: { field: 'id', strip: true },
  },
  {
    kind: 'grant',
    collection: 'grants',
    noun: 'Grant',
    body: grantBody,
    examples: grantExamples,
    putDescription:
      'Which callers see which resources, as in the bootstrap file; `name` may be left out (the path gives it) and, if given, must be the same.',
    nameInBody: { field: 'name', strip: true },
    checkDescription:
      "The grant's write without the write: the same body, run through every rule `putGrant` runs (the body's shape, the sources it names, URI patterns no URI of their source could match, the whole tenant as it would be served), then rolled back. A refusal is the very 422 the write would answer; 200 answers the grant as it would be stored. No precondition applies; nothing is stored, audited or served.",
  },
  {
    kind: 'admin-role-binding',
    collection: 'admin-role-bindings',
    noun: 'AdminRoleBinding',
    body: adminRoleBindingBody,
    examples: adminRoleBindingExamples,
    putDescription:
      "Who counts as an admin of this tenant: tokens of the tenant's issuers with any listed scope, group or subject. A `name`, if given, must be the name in the path.",
    nameInBody: { field: 'name', strip: true },
  },
];

/** One write as the tenant model imports it: the path's name, the body, and who writes. */
function writeInput(
  spec: KindSpec,
  call: AdminCall<{ tenantId: string; name: string }, unknown, unknown>,
  tenantId: string,
): EntityWriteInput {
  return {
    tenantId,
    kind: spec.kind,
    name: call.params.name,
    body: call.body as Document,
    writer: writerOf(call.writeContext),
  };
}

/** The credential names a source write sends under `secrets`: refusals about them point there. */
function secretNamesOf(body: Document): string[] {
  const secrets = body.secrets;
  return secrets !== null && typeof secrets === 'object' ? Object.keys(secrets) : [];
}

/**
 * One write of `spec`'s kind, as PUT runs it: the body's own rules, then,
 * inside the write's transaction once the tenant is locked, sources imported
 * by their type's model against the stored one they replace and the whole
 * tenant checked as it will be served. A dry run (the check operation) runs
 * all of it, preconditions aside, and rolls back: the same refusal, nothing
 * stored or audited.
 */
async function writeEntity(
  spec: KindSpec,
  call: AdminCall<{ tenantId: string; name: string }, unknown, unknown>,
  { dryRun }: { readonly dryRun: boolean },
) {
  const { params, deps } = call;
  const what = `${spec.kind} "${params.name}"`;
  const tenant = await requireTenant(deps, params.tenantId);
  const input = writeInput(spec, call, tenant.id);
  checkEntityBody(input);
  const current = await deps.store.getEntity(tenant.id, spec.kind, params.name);
  // A check is of the content only: whichever version the editor read, the write's rules are the same.
  const options = dryRun ? { dryRun } : writeOptions(call.preconditions, current, what);
  const stored = await deps.store.putEntity(call.writeContext, tenant.id, spec.kind, params.name, input.body, {
    ...options,
    prepare: (reads, replaced) => importEntity({ sourceFactories: deps.sourceFactories, reads }, input, replaced),
    check: (reads) =>
      checkTenantWrite(deps, reads, tenant.id, {
        kind: spec.kind,
        name: params.name,
        secretNames: secretNamesOf(input.body),
      }),
  });
  return { tenant, stored, created: current === undefined };
}

function routesOf(spec: KindSpec): AdminRoute[] {
  const base = `/tenants/{tenantId}/${spec.collection}`;
  const what = (name: string) => `${spec.kind} "${name}"`;
  const one = { description: `The ${spec.kind}`, schema: entityViewSchema, etag: true };
  return [
    defineAdminRoute({
      method: 'GET',
      path: base,
      operationId: `list${spec.noun}s`,
      summary: `List the tenant's ${spec.collection}`,
      tag: spec.noun,
      access: 'tenant',
      params: tenantIdParams,
      responses: { 200: { description: `Every ${spec.kind}, in the order added`, schema: entityList } },
      async handler({ params, deps }) {
        const tenant = await requireTenant(deps, params.tenantId);
        const items = await deps.store.listEntities(tenant.id, spec.kind);
        return { status: 200, body: { items: items.map((item) => entityView(item, tenant, deps.sourceFactories)) } };
      },
    }),
    defineAdminRoute({
      method: 'GET',
      path: `${base}/{name}`,
      operationId: `get${spec.noun}`,
      summary: `Read one ${spec.kind}`,
      tag: spec.noun,
      access: 'tenant',
      params: entityParams,
      responses: { 200: one },
      async handler({ params, deps }) {
        const tenant = await requireTenant(deps, params.tenantId);
        const entity = await deps.store.getEntity(tenant.id, spec.kind, params.name);
        if (entity === undefined) throw new AdminProblem('not-found', `No ${what(params.name)} in this tenant`);
        return { status: 200, body: entityView(entity, tenant, deps.sourceFactories), etag: etagOf(entity.version) };
      },
    }),
    defineAdminRoute({
      method: 'PUT',
      path: `${base}/{name}`,
      operationId: `put${spec.noun}`,
      summary: `Create or replace one ${spec.kind}`,
      description: spec.putDescription,
      tag: spec.noun,
      access: 'tenant',
      params: entityParams,
      body: spec.body,
      examples: spec.examples,
      conditional: 'if-match-or-if-none-match',
      ...(spec.nameInBody === undefined ? {} : { nameInBody: spec.nameInBody }),
      responses: { 200: one, 201: { ...one, description: `The ${spec.kind}, created` } },
      async handler(call) {
        const { tenant, stored, created } = await writeEntity(spec, call, { dryRun: false });
        return {
          status: created ? 201 : 200,
          body: entityView(stored, tenant, call.deps.sourceFactories),
          etag: etagOf(stored.version),
        };
      },
    }),
    ...(spec.checkDescription === undefined
      ? []
      : [
          defineAdminRoute({
            method: 'POST',
            path: `${base}/{name}/check`,
            operationId: `check${spec.noun}`,
            summary: `Check one ${spec.kind} as its write would, writing nothing`,
            description: spec.checkDescription,
            tag: spec.noun,
            access: 'tenant',
            params: entityParams,
            body: spec.body,
            examples: spec.examples,
            ...(spec.nameInBody === undefined ? {} : { nameInBody: spec.nameInBody }),
            responses: {
              200: { description: `The ${spec.kind} as the write would store it`, schema: entityViewSchema },
            },
            async handler(call) {
              const { tenant, stored } = await writeEntity(spec, call, { dryRun: true });
              return { status: 200, body: entityView(stored, tenant, call.deps.sourceFactories) };
            },
          }),
        ]),
    defineAdminRoute({
      method: 'DELETE',
      path: `${base}/{name}`,
      operationId: `delete${spec.noun}`,
      summary: `Delete one ${spec.kind}`,
      tag: spec.noun,
      access: 'tenant',
      params: entityParams,
      conditional: 'if-match-required',
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, deps, preconditions, writeContext }) {
        const tenant = await requireTenant(deps, params.tenantId);
        const current = await deps.store.getEntity(tenant.id, spec.kind, params.name);
        if (current === undefined) throw new AdminProblem('not-found', `No ${what(params.name)} in this tenant`);
        const options = writeOptions(preconditions, current, what(params.name));
        await deps.store.deleteEntity(writeContext, tenant.id, spec.kind, params.name, {
          ...options,
          check: (reads) => checkTenantWrite(deps, reads, tenant.id, { kind: spec.kind, name: params.name }),
        });
        return { status: 204 };
      },
    }),
  ];
}

/** Issuers, sources, grants and admin role bindings: the same four operations each. */
export const entityRoutes: readonly AdminRoute[] = KINDS.flatMap(routesOf);
