import type { FastifyInstance } from 'fastify';
import { tooManyRequests } from '@mcpgw/admin';
import type { RateLimits } from '../../plugins/rate-limit.js';
import type { AdminAuthenticator } from '../admin-authenticator.js';
import type { AdminDeps } from '../admin-route.js';
import type { ConsoleSignIn } from '../sign-in/admin-sign-in.js';
import type { OperatorSignIn } from '../sign-in/operator-sign-in.js';
import type { SessionAuth } from '../sign-in/session-authenticator.js';
import { createConsoleCallers } from './console-caller.js';
import { createConsoleContext, sendProblemPage } from './console-context.js';
import { registerConnectedAppsRoutes } from './connected-apps-routes.js';
import { acceptForms } from './console-form.js';
import { registerEntityRoutes } from './entity-routes.js';
import { registerEntryRoutes } from './entry-routes.js';
import { registerGrantCheckRoutes } from './grant-check-routes.js';
import { registerOperatorRoutes } from './operator-routes.js';
import { registerTenantPageRoutes } from './tenant-page-routes.js';

export interface ConsolePluginOptions {
  readonly deps: AdminDeps;
  readonly bearer: AdminAuthenticator;
  readonly session: SessionAuth;
  readonly signIn: ConsoleSignIn;
  readonly operatorSignIn: OperatorSignIn;
  readonly rateLimits: Pick<RateLimits, 'checkAdminAddress'>;
}

/**
 * The admin console (docs/admin-console.md): server-rendered pages under
 * `/admin/` (and `/`) over the admin API's own operations. No page needs a
 * script (the one same-origin script only enhances the grants form); every
 * form posts to its page's route with the session's CSRF token and the
 * entity's version.
 */
export async function consolePlugin(scope: FastifyInstance, options: ConsolePluginOptions): Promise<void> {
  acceptForms(scope);
  // Counted under the admin API's per-address limit, before anyone is authenticated.
  scope.addHook('onRequest', async (request, reply) => {
    const refusal = await options.rateLimits.checkAdminAddress(request);
    if (refusal === undefined) return undefined;
    const problem = tooManyRequests(refusal);
    for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
    return sendProblemPage(reply, { title: 'Too many requests', status: 429, detail: problem.detail });
  });
  scope.setErrorHandler((error, request, reply) => {
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendProblemPage(reply, { title: 'The request is malformed', status, detail: (error as Error).message });
    }
    request.log.error({ err: error }, 'admin console request failed');
    return sendProblemPage(reply, {
      title: 'Internal server error',
      status: 500,
      detail: 'The request failed on the server; it was logged',
    });
  });
  const context = createConsoleContext(
    options.deps,
    createConsoleCallers({
      bearer: options.bearer,
      session: options.session,
      signIn: options.signIn,
      operator: options.operatorSignIn,
    }),
    options.signIn,
  );
  registerEntryRoutes(scope, context);
  options.operatorSignIn.register(scope);
  registerOperatorRoutes(scope, context);
  registerTenantPageRoutes(scope, context);
  registerConnectedAppsRoutes(scope, context);
  registerEntityRoutes(scope, context);
  registerGrantCheckRoutes(scope, context);
}
