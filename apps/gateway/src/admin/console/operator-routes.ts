import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TenantView } from '@mcpgw/admin';
import { markup } from '@mcpgw/core';
import { CONSOLE_PREFIX, OPERATOR_SIGN_IN_PATH, placeProblem, tenantsPage } from '@mcpgw/admin';
import type { ConsoleCaller } from './console-caller.js';
import type { ConsoleContext } from './console-context.js';
import { sendFailure, sendProblemPage } from './console-context.js';
import { formFields } from './console-form.js';
import { consoleProblemOf } from './console-problem.js';
import { seeOther, sendPage } from './console-reply.js';

type OperatorRequest = FastifyRequest<{
  Params: { tenantId?: string };
  Querystring: Record<string, string | undefined>;
}>;

const NOTICES: Readonly<Record<string, string>> = {
  created: 'Created',
  suspended: 'Suspended',
  resumed: 'Resumed',
  deleted: 'Deleted',
};

/**
 * Operators' pages: every tenant with its status; create, suspend, resume,
 * delete, each the admin API's own operation (listTenants, createTenant, …),
 * so a tenant admin gets the API's 403 here too.
 */
export function registerOperatorRoutes(scope: FastifyInstance, context: ConsoleContext): void {
  const withCaller =
    (handler: (request: OperatorRequest, reply: FastifyReply, caller: ConsoleCaller) => Promise<FastifyReply>) =>
    async (request: OperatorRequest, reply: FastifyReply) => {
      try {
        const caller = await context.callers.callerOf(request);
        if (caller === undefined) {
          return sendProblemPage(reply, {
            title: 'Authentication required',
            status: 401,
            detail: `Operators sign in at ${OPERATOR_SIGN_IN_PATH} (a session that was signed out or has expired is gone: sign in again) or call this page with their operator token (Authorization: Bearer); tenant admins sign in on their tenant's console.`,
          });
        }
        context.callers.checkForm(request, caller, formFields(request).csrf);
        return await handler(request, reply, caller);
      } catch (error) {
        return sendFailure(reply, request, error, undefined);
      }
    };

  const list = async (
    request: OperatorRequest,
    reply: FastifyReply,
    caller: ConsoleCaller,
    extra: Partial<Parameters<typeof tenantsPage>[0]> = {},
    status = 200,
  ) => {
    const listed = await context.run('listTenants', request, caller, { params: {} });
    const { done, id } = request.query;
    const notice =
      done !== undefined && NOTICES[done] !== undefined
        ? markup`<p class="notice good">${NOTICES[done]}${id === undefined ? '' : markup` <code>${id}</code>`}.</p>`
        : undefined;
    return sendPage(
      reply,
      status,
      tenantsPage({
        viewer: caller.viewer,
        tenants: (listed.result.body as { tenants: TenantView[] }).tenants,
        ...(notice === undefined ? {} : { notice }),
        ...extra,
      }),
    );
  };

  scope.get('/admin/tenants', withCaller(list));

  scope.post(
    '/admin/tenants',
    withCaller(async (request, reply, caller) => {
      const fields = formFields(request);
      const id = (fields.id ?? '').trim();
      const name = (fields.name ?? '').trim();
      try {
        await context.run('createTenant', request, caller, {
          params: {},
          body: { id, ...(name === '' ? {} : { name }) },
        });
      } catch (error) {
        const problem = consoleProblemOf(error);
        if (problem === undefined || problem.status === 403) throw error;
        const placed = placeProblem(problem, (entry) => {
          const member = entry.pointer?.split('/')[1];
          return member === 'id' || member === 'name' ? member : undefined;
        });
        return list(request, reply, caller, { values: { id, name }, placed }, problem.status);
      }
      return seeOther(reply, `${CONSOLE_PREFIX}/tenants?done=created&id=${encodeURIComponent(id)}`);
    }),
  );

  const ACTIONS = [
    ['suspend', 'suspendTenant', 'suspended'],
    ['resume', 'resumeTenant', 'resumed'],
    ['delete', 'deleteTenant', 'deleted'],
  ] as const;
  for (const [path, operationId, done] of ACTIONS) {
    scope.post(
      `/admin/tenants/:tenantId/${path}`,
      withCaller(async (request, reply, caller) => {
        const tenantId = request.params.tenantId ?? '';
        const version = formFields(request).version;
        try {
          await context.run(operationId, request, caller, {
            params: { tenantId },
            preconditions: version !== undefined && /^\d{1,15}$/.test(version) ? { ifVersion: Number(version) } : {},
          });
        } catch (error) {
          const problem = consoleProblemOf(error);
          if (problem === undefined || problem.status === 403 || problem.status === 404) throw error;
          return list(
            request,
            reply,
            caller,
            {
              notice: markup`<div class="notice bad" role="alert">
                <p>
                  <strong>${problem.title}</strong> (${problem.status}) for <code>${tenantId}</code>: ${problem.detail}
                </p>
              </div>`,
            },
            problem.status,
          );
        }
        return seeOther(reply, `${CONSOLE_PREFIX}/tenants?done=${done}&id=${encodeURIComponent(tenantId)}`);
      }),
    );
  }
}
