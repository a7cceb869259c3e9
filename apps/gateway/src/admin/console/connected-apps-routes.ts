import type { FastifyInstance } from 'fastify';
import type { ConnectedAppsAction, ConnectedClientView, FormProblem, UserGrantView } from '@mcpgw/admin';
import {
  CONFIRM_CONSOLE_CLIENT_FIELD,
  CONNECTED_APPS_ACTIONS,
  connectedAppsPage,
  tenantConsolePath,
} from '@mcpgw/admin';
import type { ConsoleContext } from './console-context.js';
import { consoleProblemOf, isTenantMissing } from './console-problem.js';
import { seeOther, sendPage } from './console-reply.js';
import type { TenantPageCall } from './tenant-route.js';
import { tenantRoute } from './tenant-route.js';

/** Each revoke button's API operation, the id's path parameter and the notice after it. */
const REVOKES: Readonly<Record<ConnectedAppsAction, { operation: string; param: string; done: string }>> = {
  'revoke-client': { operation: 'deleteOAuthClient', param: 'clientId', done: 'client' },
  'revoke-grant': { operation: 'revokeOAuthGrant', param: 'grantId', done: 'grant' },
};

const NOTICES: Readonly<Record<string, string>> = {
  client: 'Client revoked, with its grants and their tokens.',
  grant: 'Grant revoked: its refresh tokens no longer work.',
};

/**
 * The tenant's hosted authorization server's clients and grants as a page
 * (docs/admin-console.md). Listing and revoking run the admin API's own
 * operations (listOAuthClients, deleteOAuthClient, listOAuthGrants,
 * revokeOAuthGrant), so their access rule keeps another tenant's admin out
 * and every removal is audited as the JSON route audits it.
 */
export function registerConnectedAppsRoutes(scope: FastifyInstance, context: ConsoleContext): void {
  const path = '/admin/tenants/:tenantId/connected-apps';

  /** The client the tenant's console signs its admins in with, as the tenant is served now. */
  const consoleClientOf = (tenantId: string): string | undefined => {
    const lease = context.deps.tenants.acquire(tenantId);
    if (lease === undefined) return undefined;
    try {
      return lease.runtime.config.adminSignIn?.clientId;
    } finally {
      lease.release();
    }
  };

  const render = async (call: TenantPageCall, status: number, message: { notice?: string; problem?: FormProblem }) => {
    const { request, caller, tenantId } = call;
    const clients = await context.run('listOAuthClients', request, caller, { params: { tenantId } });
    const grants = await context.run('listOAuthGrants', request, caller, { params: { tenantId } });
    return sendPage(
      call.reply,
      status,
      connectedAppsPage({
        tenantId,
        viewer: caller.viewer,
        clients: (clients.result.body as { clients: ConnectedClientView[] }).clients,
        grants: (grants.result.body as { grants: UserGrantView[] }).grants,
        consoleClientId: consoleClientOf(tenantId),
        ...message,
      }),
    );
  };

  scope.get(
    path,
    tenantRoute(context, async (call) => {
      const done = call.request.query.done;
      return render(call, 200, done !== undefined && NOTICES[done] !== undefined ? { notice: NOTICES[done] } : {});
    }),
  );

  scope.post(
    path,
    tenantRoute(context, async (call) => {
      const action = call.fields.action as ConnectedAppsAction | undefined;
      const id = call.fields.id ?? '';
      if (action === undefined || !CONNECTED_APPS_ACTIONS.includes(action)) {
        return render(call, 422, {
          problem: {
            title: 'The request content is invalid',
            status: 422,
            detail: 'The form names no revoke (action must be revoke-client or revoke-grant); nothing was changed',
          },
        });
      }
      const revoke = REVOKES[action];
      // Revoking the console's own client signs every admin of it out, the one revoking it too:
      // only with the row's confirmation checked (a browser requires it; this is for any other client).
      if (
        action === 'revoke-client' &&
        id === consoleClientOf(call.tenantId) &&
        call.fields[CONFIRM_CONSOLE_CLIENT_FIELD] !== 'yes'
      ) {
        return render(call, 422, {
          problem: {
            title: 'The request content is invalid',
            status: 422,
            detail:
              "This is the console's own sign-in client: revoking it signs every admin of this console out. " +
              'Check the confirmation next to its revoke button to go ahead; nothing was changed',
          },
        });
      }
      try {
        await context.run(revoke.operation, call.request, call.caller, {
          params: { tenantId: call.tenantId, [revoke.param]: id },
        });
      } catch (error) {
        const problem = consoleProblemOf(error);
        if (problem === undefined || isTenantMissing(problem)) throw error;
        return render(call, problem.status, { problem });
      }
      return seeOther(call.reply, `${tenantConsolePath(call.tenantId, 'connected-apps')}?done=${revoke.done}`);
    }),
  );
}
