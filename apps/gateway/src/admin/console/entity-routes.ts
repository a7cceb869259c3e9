import type { FastifyInstance } from 'fastify';
import type { Markup } from '@mcpgw/core';
import { markup } from '@mcpgw/core';
import type {
  ClaimsCheck,
  ConsoleCollection,
  EntityEditing,
  EntityView,
  FormProblem,
  PlacedProblem,
  PreviewResponse,
} from '@mcpgw/admin';
import {
  CLAIMS_CHECK_FIELDS,
  previewBodyOf,
  callersByGrant,
  ENTITY_FORMS,
  entityPage,
  grantPatternWarnings,
  jsonChanges,
  nameFieldOf,
  placeProblem,
  tenantConsolePath,
} from '@mcpgw/admin';
import type { ConsoleContext } from './console-context.js';
import { sendProblemPage } from './console-context.js';
import { consoleProblemOf, isTenantMissing } from './console-problem.js';
import { seeOther, sendPage } from './console-reply.js';
import type { TenantPageCall } from './tenant-route.js';
import { tenantRoute } from './tenant-route.js';

const COLLECTIONS = Object.keys(ENTITY_FORMS) as ConsoleCollection[];

/** What a fresh "add" form starts with. */
const BLANK: Readonly<Record<ConsoleCollection, Record<string, string>>> = {
  sources: { type: 'static', options: '{\n  "resources": []\n}' },
  grants: { allow: '' },
  issuers: { document: '{\n  "discovery": true\n}' },
  'admin-role-bindings': {},
};

const NOTICES: Readonly<Record<string, string>> = { saved: 'Saved', deleted: 'Deleted' };

/** A version field as the store's precondition (a form's ETag, RFC 9110 section 8.8.3, as a number). */
const versionOf = (value: string | undefined): number | undefined =>
  value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;

/**
 * Issuers, sources, grants and admin role bindings as pages: each form posts
 * to its page's own route, which runs the JSON route's operation (putSource,
 * deleteGrant, testSourceConnection, …) for the signed-in admin.
 */
export function registerEntityRoutes(scope: FastifyInstance, context: ConsoleContext): void {
  const { deps } = context;
  const sourceTypes = new Map(
    [...deps.sourceFactories].map(([type, factory]) => [type, [...(factory.model.credentials ?? [])]] as const),
  );

  const formOf = (collection: string | undefined) =>
    COLLECTIONS.includes(collection as ConsoleCollection) ? ENTITY_FORMS[collection as ConsoleCollection] : undefined;

  const render = async (
    call: TenantPageCall,
    collection: ConsoleCollection,
    editing: EntityEditing,
    status: number,
    notice?: Markup,
    claimsCheck?: ClaimsCheck,
  ) => {
    const form = ENTITY_FORMS[collection];
    const { tenantId, caller, request, reply } = call;
    const listed = await context.run(form.list, request, caller, { params: { tenantId } });
    const items = (listed.result.body as { items: EntityView[] }).items;
    const warnings =
      collection === 'grants'
        ? await grantPatternWarnings((id) => deps.tenants.acquire(id), tenantId, AbortSignal.timeout(10_000))
        : undefined;
    // Listing the grants ran their access rule: whoever sees them may see which callers they matched.
    const recentCallers =
      collection === 'grants' ? callersByGrant(await scope.accessActivity.list(tenantId)) : undefined;
    return sendPage(
      reply,
      status,
      entityPage({
        tenantId,
        collection,
        viewer: caller.viewer,
        items,
        editing,
        ...(notice === undefined ? {} : { notice }),
        ...(collection === 'sources' ? { sourceTypes } : {}),
        ...(warnings === undefined ? {} : { warnings }),
        ...(recentCallers === undefined ? {} : { recentCallers }),
        ...(claimsCheck === undefined ? {} : { claimsCheck }),
      }),
    );
  };

  const placed = (collection: ConsoleCollection, problem: FormProblem): PlacedProblem =>
    placeProblem(problem, (entry) => nameFieldOf(entry) ?? ENTITY_FORMS[collection].fieldOf(entry));

  const notFound = (call: TenantPageCall) =>
    sendProblemPage(call.reply, { title: 'Not found', status: 404, detail: 'No such console page' }, call.caller);

  // "Check claims against these grants": the preview of one pasted caller (the `previewAs`
  // operation, with its roles and validation), shown as a column of the grants page.
  scope.post(
    '/admin/tenants/:tenantId/grants/match',
    tenantRoute(context, async (call) => {
      const values = Object.fromEntries(Object.entries(call.fields).filter(([key]) => key.startsWith('check.')));
      const fieldOf = (pointer: string | undefined) => {
        const member = pointer?.split('/')[1];
        return member === 'claims' || member === 'issuer' || member === 'token'
          ? CLAIMS_CHECK_FIELDS[member]
          : undefined;
      };
      const refused = (problem: FormProblem) =>
        render(call, 'grants', { values: BLANK.grants }, problem.status, undefined, {
          values,
          placed: placeProblem(problem, (entry) => fieldOf(entry.pointer)),
        });
      const asked = previewBodyOf(call.fields, CLAIMS_CHECK_FIELDS);
      if (asked.empty) {
        return refused({
          title: 'The request content is invalid',
          status: 422,
          detail: 'Nothing was checked',
          errors: [{ pointer: '/claims', detail: 'paste a JSON object of claims or an access token' }],
        });
      }
      if ('invalid' in asked) {
        return refused({
          title: 'The request content is invalid',
          status: 422,
          detail: 'Nothing was checked',
          errors: [{ pointer: `/${asked.member}`, detail: asked.invalid }],
        });
      }
      let result: PreviewResponse;
      try {
        const ran = await context.run('previewAs', call.request, call.caller, {
          params: { tenantId: call.tenantId },
          body: asked.body,
        });
        result = ran.result.body as PreviewResponse;
      } catch (error) {
        const problem = consoleProblemOf(error);
        if (problem === undefined || isTenantMissing(problem)) throw error;
        return refused(problem);
      }
      return render(call, 'grants', { values: BLANK.grants }, 200, undefined, { values, result });
    }),
  );

  scope.get(
    '/admin/tenants/:tenantId/:collection',
    tenantRoute(context, async (call) => {
      const form = formOf(call.request.params.collection);
      if (form === undefined) return notFound(call);
      const { collection } = form;
      const { edit, done, name } = call.request.query;
      const notice =
        done !== undefined && NOTICES[done] !== undefined
          ? markup`<p class="notice good">${NOTICES[done]}${name === undefined ? '' : markup` <code>${name}</code>`}.</p>`
          : undefined;
      if (edit === undefined) return render(call, collection, { values: BLANK[collection] }, 200, notice);
      const got = await context.run(form.get, call.request, call.caller, {
        params: { tenantId: call.tenantId, name: edit },
      });
      const entity = got.result.body as EntityView;
      return render(
        call,
        collection,
        {
          name: entity.name,
          values: form.fieldsOf(entity.document),
          version: entity.version,
          base: JSON.stringify(entity.document),
        },
        200,
        notice,
      );
    }),
  );

  scope.post(
    '/admin/tenants/:tenantId/:collection',
    tenantRoute(context, async (call) => {
      const form = formOf(call.request.params.collection);
      if (form === undefined) return notFound(call);
      const { collection } = form;
      const { fields, tenantId } = call;
      const name = (fields.name ?? '').trim();
      const version = versionOf(fields.version);
      // What the page shows again after a refusal: what was typed, never a credential.
      const typed = Object.fromEntries(Object.entries(fields).filter(([key]) => !key.startsWith('secret.')));
      const editing = {
        name,
        values: typed,
        ...(version === undefined ? {} : { version }),
        ...(fields.base === undefined ? {} : { base: fields.base }),
      };
      const converted = form.bodyOf(fields);
      if ('problem' in converted) {
        return render(
          call,
          collection,
          { ...editing, placed: placed(collection, converted.problem) },
          converted.problem.status,
        );
      }
      try {
        await context.run(form.put, call.request, call.caller, {
          params: { tenantId, name },
          body: converted.body,
          // A new entity's form creates only (412 if it appeared meanwhile); an edit replaces the version it read.
          preconditions: version === undefined ? { create: true } : { ifVersion: version },
        });
      } catch (error) {
        const problem = consoleProblemOf(error);
        if (problem === undefined || isTenantMissing(problem)) throw error;
        if (problem.status === 412) {
          const current = await context
            .run(form.get, call.request, call.caller, { params: { tenantId, name } })
            .then((got) => got.result.body as EntityView)
            .catch(() => undefined);
          const loaded = fields.base === undefined ? undefined : (JSON.parse(fields.base) as unknown);
          return render(
            call,
            collection,
            {
              name,
              values: typed,
              ...(current === undefined ? {} : { version: current.version, base: JSON.stringify(current.document) }),
              stale: { current, changes: jsonChanges(loaded, current?.document) },
              placed: placed(collection, problem),
            },
            412,
          );
        }
        return render(call, collection, { ...editing, placed: placed(collection, problem) }, problem.status);
      }
      return seeOther(
        call.reply,
        `${tenantConsolePath(tenantId, collection)}?done=saved&name=${encodeURIComponent(name)}`,
      );
    }),
  );

  scope.post(
    '/admin/tenants/:tenantId/:collection/delete',
    tenantRoute(context, async (call) => {
      const form = formOf(call.request.params.collection);
      if (form === undefined) return notFound(call);
      const { fields, tenantId } = call;
      const name = fields.name ?? '';
      const version = versionOf(fields.version);
      try {
        await context.run(form.remove, call.request, call.caller, {
          params: { tenantId, name },
          preconditions: version === undefined ? {} : { ifVersion: version },
        });
      } catch (error) {
        const problem = consoleProblemOf(error);
        if (problem === undefined || isTenantMissing(problem)) throw error;
        return render(
          call,
          form.collection,
          { values: BLANK[form.collection] },
          problem.status,
          markup`<div class="notice bad" role="alert">
            <p>
              <strong>${problem.title}</strong> (${problem.status}):
              ${problem.detail}${
                problem.status === 412
                  ? ' It changed since this page was loaded: look at it again before deleting.'
                  : ''
              }
            </p>
            ${
              (problem.errors ?? []).length === 0
                ? ''
                : markup`<ul>
                    ${(problem.errors ?? []).map((entry) => markup`<li>${entry.location ?? entry.pointer ?? ''}: ${entry.detail}</li>`)}
                  </ul>`
            }
          </div>`,
        );
      }
      return seeOther(
        call.reply,
        `${tenantConsolePath(tenantId, form.collection)}?done=deleted&name=${encodeURIComponent(name)}`,
      );
    }),
  );

  scope.post(
    '/admin/tenants/:tenantId/sources/test',
    tenantRoute(context, async (call) => {
      const name = call.fields.name ?? '';
      const tested = await context.run('testSourceConnection', call.request, call.caller, {
        params: { tenantId: call.tenantId, name },
      });
      const result = tested.result.body as { ok: boolean; reason?: string; detail?: string; elapsedMs: number };
      return render(
        call,
        'sources',
        { values: BLANK.sources },
        200,
        result.ok
          ? markup`<p class="notice good">
              Connection test of <code>${name}</code>: reachable (${result.elapsedMs} ms).
            </p>`
          : markup`<div class="notice bad">
              <p>
                Connection test of <code>${name}</code> failed:
                <strong>${result.reason ?? 'unavailable'}</strong> (${result.elapsedMs} ms).
              </p>
              ${result.detail === undefined ? '' : markup`<p><code>${result.detail}</code></p>`}
            </div>`,
      );
    }),
  );
}
