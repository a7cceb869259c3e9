import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FormFields } from '@mcpgw/admin';
import type { ConsoleCaller } from './console-caller.js';
import type { ConsoleContext } from './console-context.js';
import { sendFailure, sendSignedOut } from './console-context.js';
import { formFields } from './console-form.js';

export type TenantRequest = FastifyRequest<{
  Params: { tenantId: string; collection?: string };
  Querystring: Record<string, string | undefined>;
}>;

/** What a tenant page's handler gets: its caller (checked), the tenant, and a form's fields (CSRF checked). */
export interface TenantPageCall {
  readonly request: TenantRequest;
  readonly reply: FastifyReply;
  readonly caller: ConsoleCaller;
  readonly tenantId: string;
  readonly fields: FormFields;
}

/**
 * A console route of one tenant: signed out gets the sign-in page, a session
 * of another tenant the 404 of a tenant that does not exist, a posted form
 * without its CSRF token a 403; only then does the handler run.
 */
export const tenantRoute =
  (context: ConsoleContext, handler: (call: TenantPageCall) => Promise<FastifyReply>) =>
  async (request: TenantRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const { tenantId } = request.params;
    try {
      const caller = await context.callers.callerOf(request);
      if (caller === undefined) return sendSignedOut(reply, request, tenantId);
      const fields = formFields(request);
      context.callers.checkForm(request, caller, fields.csrf);
      return await handler({ request, reply, caller, tenantId, fields });
    } catch (error) {
      return sendFailure(reply, request, error, tenantId);
    }
  };
