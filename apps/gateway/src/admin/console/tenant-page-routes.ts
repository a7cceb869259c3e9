import type { FastifyInstance } from 'fastify';
import type { AccessFilters, AuditPageView, PreviewResponse, PreviewSide, TenantStatusView } from '@mcpgw/admin';
import {
  AUDIT_FILTERS,
  accessActivityPage,
  filterAccess,
  auditConsolePage,
  overviewPage,
  placeProblem,
  previewPage,
  previewBodyOf,
  tenantConsolePath,
} from '@mcpgw/admin';
import type { ConsoleContext } from './console-context.js';
import { trafficOf } from './traffic-view.js';
import { consoleProblemOf, isTenantMissing } from './console-problem.js';
import { seeOther, sendPage } from './console-reply.js';
import type { TenantPageCall } from './tenant-route.js';
import { tenantRoute } from './tenant-route.js';

/** A `datetime-local` value (no offset) as the audit query's RFC 3339 time, read as UTC; anything else unchanged. */
const asUtc = (value: string): string =>
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value) ? `${value}${value.length === 16 ? ':00' : ''}Z` : value;

/** The overview, "preview as" and the audit log of one tenant. */
export function registerTenantPageRoutes(scope: FastifyInstance, context: ConsoleContext): void {
  scope.get('/admin/tenants/:tenantId', async (request, reply) => seeOther(reply, `${request.url}/`));

  scope.get(
    '/admin/tenants/:tenantId/',
    tenantRoute(context, async ({ request, reply, caller, tenantId }) => {
      const status = await context.run('getTenantStatus', request, caller, { params: { tenantId } });
      const traffic = await trafficOf(scope.tenantTraffic, tenantId, request.log);
      return sendPage(
        reply,
        200,
        overviewPage({ tenantId, viewer: caller.viewer, status: status.result.body as TenantStatusView, traffic }),
      );
    }),
  );

  const preview = async (call: TenantPageCall): Promise<PreviewSide[]> => {
    const sides: PreviewSide[] = [];
    for (const side of ['a', 'b'] as const) {
      const values = Object.fromEntries(Object.entries(call.fields).filter(([key]) => key.startsWith(`${side}.`)));
      const fieldOf = (pointer: string | undefined) => {
        const member = pointer?.split('/')[1];
        return member === 'claims' || member === 'issuer' || member === 'token' ? `${side}.${member}` : undefined;
      };
      const asked = previewBodyOf(call.fields, {
        claims: `${side}.claims`,
        issuer: `${side}.issuer`,
        token: `${side}.token`,
      });
      if (asked.empty) {
        sides.push({ values });
        continue;
      }
      if ('invalid' in asked) {
        const problem = {
          title: 'The request content is invalid',
          status: 422,
          detail: 'Nothing was previewed',
          errors: [{ pointer: `/${asked.member}`, detail: asked.invalid }],
        };
        sides.push({ values, placed: placeProblem(problem, (entry) => fieldOf(entry.pointer)) });
        continue;
      }
      try {
        const ran = await context.run('previewAs', call.request, call.caller, {
          params: { tenantId: call.tenantId },
          body: asked.body,
        });
        sides.push({ values, result: ran.result.body as PreviewResponse });
      } catch (error) {
        const problem = consoleProblemOf(error);
        if (problem === undefined || isTenantMissing(problem)) throw error;
        sides.push({ values, placed: placeProblem(problem, (entry) => fieldOf(entry.pointer)) });
      }
    }
    return sides;
  };

  scope.get(
    '/admin/tenants/:tenantId/preview',
    tenantRoute(context, async ({ reply, caller, tenantId }) =>
      sendPage(reply, 200, previewPage({ tenantId, viewer: caller.viewer, a: { values: {} }, b: { values: {} } })),
    ),
  );
  scope.post(
    '/admin/tenants/:tenantId/preview',
    tenantRoute(context, async (call) => {
      const [a, b] = await preview(call);
      const refused = [a, b].find((side) => side?.placed !== undefined)?.placed?.problem.status;
      return sendPage(
        call.reply,
        refused ?? 200,
        previewPage({ tenantId: call.tenantId, viewer: call.caller.viewer, a: a!, b: b! }),
      );
    }),
  );

  scope.get(
    '/admin/tenants/:tenantId/audit',
    tenantRoute(context, async ({ request, reply, caller, tenantId }) => {
      const filters = Object.fromEntries(
        AUDIT_FILTERS.flatMap((key) => {
          const value = request.query[key]?.trim();
          return value === undefined || value === '' ? [] : [[key, value]];
        }),
      );
      const query = {
        ...Object.fromEntries(
          Object.entries(filters).map(([key, value]) => [
            key,
            key === 'since' || key === 'until' ? asUtc(value) : value,
          ]),
        ),
        ...(request.query.cursor === undefined ? {} : { cursor: request.query.cursor }),
        limit: '25',
      };
      try {
        const page = await context.run('listAuditEvents', request, caller, { params: { tenantId }, query });
        return sendPage(
          reply,
          200,
          auditConsolePage({ tenantId, viewer: caller.viewer, filters, page: page.result.body as AuditPageView }),
        );
      } catch (error) {
        const problem = consoleProblemOf(error);
        if (problem === undefined || isTenantMissing(problem)) throw error;
        const placed = placeProblem(problem, (entry) => entry.parameter);
        return sendPage(reply, problem.status, auditConsolePage({ tenantId, viewer: caller.viewer, filters, placed }));
      }
    }),
  );

  scope.get(
    '/admin/tenants/:tenantId/access',
    tenantRoute(context, async ({ request, reply, caller, tenantId }) => {
      // The status operation's access rule decides who may see the tenant (another tenant's admin: its 404).
      await context.run('getTenantStatus', request, caller, { params: { tenantId } });
      const filters = Object.fromEntries(
        (['caller', 'resource'] as const).flatMap((key) => {
          const value = request.query[key]?.trim();
          return value === undefined || value === '' ? [] : [[key, value.slice(0, 200)]];
        }),
      ) as AccessFilters;
      const records = filterAccess(await scope.accessActivity.list(tenantId), filters);
      return sendPage(
        reply,
        200,
        accessActivityPage({
          tenantId,
          viewer: caller.viewer,
          filters,
          records,
          retentionHours: scope.settings.config.env.ACCESS_ACTIVITY_RETENTION_HOURS,
        }),
      );
    }),
  );

  // Ends the session on every replica and clears this browser's cookie, as POST .../logout does.
  scope.post(
    '/admin/tenants/:tenantId/sign-out',
    tenantRoute(context, async ({ reply, caller, tenantId }) => {
      if (caller.session !== undefined) await context.signIn.end(caller.session);
      return context.signIn.clearSession(reply).redirect(tenantConsolePath(tenantId), 303);
    }),
  );
}
