import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { slug } from '@mcpgw/config';
import { CONSOLE_PREFIX, consoleIndexPage, homePage, signInPath, tenantConsolePath } from '@mcpgw/admin';
import type { ConsoleContext } from './console-context.js';
import { sendFailure } from './console-context.js';
import { seeOther, sendPage } from './console-reply.js';

type EntryRequest = FastifyRequest<{ Params: { tenantId?: string }; Querystring: Record<string, string | undefined> }>;

/** `/`, `/admin/` and the sign-in shortcuts: where a person starts. */
export function registerEntryRoutes(scope: FastifyInstance, context: ConsoleContext): void {
  scope.get('/', async (_request, reply) => sendPage(reply, 200, homePage({ mcpEndpointExample: '/t/{tenant}/mcp' })));

  scope.get(CONSOLE_PREFIX, async (_request, reply) => seeOther(reply, `${CONSOLE_PREFIX}/`));

  // A browser with a session goes to its tenant's overview; an operator's token sees the tenant list link.
  scope.get(`${CONSOLE_PREFIX}/`, async (request: EntryRequest, reply) => {
    try {
      const tenantId = context.signIn.sealedTenantOf(request);
      if (tenantId !== undefined && request.headers.authorization === undefined) {
        return seeOther(reply, tenantConsolePath(tenantId));
      }
      const caller = await context.callers.callerOf(request);
      return sendPage(
        reply,
        200,
        consoleIndexPage({
          ...(caller === undefined ? {} : { viewer: caller.viewer }),
          operator: caller?.principal.kind === 'operator',
        }),
      );
    } catch (error) {
      return sendFailure(reply, request, error, undefined);
    }
  });

  // The sign-in form of `/admin/` and the README's link: the tenant's browser sign-in, back to its overview.
  const signIn = async (tenantId: string | undefined, reply: FastifyReply) => {
    if (tenantId === undefined || !slug.safeParse(tenantId).success) return seeOther(reply, `${CONSOLE_PREFIX}/`);
    return reply.header('cache-control', 'no-store').redirect(signInPath(tenantId, tenantConsolePath(tenantId)), 302);
  };
  scope.get(`${CONSOLE_PREFIX}/sign-in`, async (request: EntryRequest, reply) =>
    signIn(request.query.tenant?.trim(), reply),
  );
  scope.get(`${CONSOLE_PREFIX}/tenants/:tenantId/sign-in`, async (request: EntryRequest, reply) =>
    signIn(request.params.tenantId, reply),
  );
}
