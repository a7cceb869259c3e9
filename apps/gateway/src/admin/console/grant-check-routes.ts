import type { FastifyInstance, FastifyReply } from 'fastify';
import type { EntityView, FormProblem, GrantCheckAnswer } from '@mcpgw/admin';
import {
  CONSOLE_SCRIPT,
  CONSOLE_SCRIPT_PATH,
  CONSOLE_SCRIPT_VERSION,
  editedGrantWarnings,
  ENTITY_FORMS,
  grantCheckProblems,
  grantCheckWarnings,
  problemDocument,
} from '@mcpgw/admin';
import type { Grant } from '@mcpgw/policy';
import { errorSummary } from '@mcpgw/core';
import type { ConsoleContext } from './console-context.js';
import { formFields } from './console-form.js';
import { consoleProblemOf } from './console-problem.js';

/** The name a grant being added is checked under before one is typed: the check is of what it sees. */
const UNNAMED = 'grant-being-added';

/** A JSON answer of the console (RFC 9457 section 3 for a problem): never cached, never sniffed. */
function sendJson(reply: FastifyReply, status: number, body: unknown, type = 'application/json'): FastifyReply {
  return reply
    .code(status)
    .type(`${type}; charset=utf-8`)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .send(JSON.stringify(body));
}

const sendProblem = (reply: FastifyReply, problem: FormProblem) =>
  sendJson(reply, problem.status, problem, 'application/problem+json');

/**
 * The grants form's check as it is typed (docs/admin-console.md), for the
 * console's script: the form's fields, posted with the session's CSRF token
 * like the save, run through the grant's write without the write (the
 * `checkGrant` operation: the caller's access, the body's rules, the sources
 * it names, patterns no URI of their source could match, the tenant as
 * served) and through the grants page's pattern check. Problems are what the
 * save would refuse, word for word; warnings what it would save that matches
 * nothing today. Refusals of the request itself (signed out, another tenant,
 * no CSRF token, malformed) are problem details, never pages.
 */
export function registerGrantCheckRoutes(scope: FastifyInstance, context: ConsoleContext): void {
  const { deps } = context;

  scope.post<{ Params: { tenantId: string } }>(
    '/admin/tenants/:tenantId/grants/check',
    {
      // A body the parser refused (too large, not a form) is answered as JSON too, not as a page.
      errorHandler(error, request, reply) {
        const status = (error as { statusCode?: number }).statusCode;
        if (status !== undefined && status >= 400 && status < 500) {
          return sendProblem(reply, { ...problemDocument('invalid-request', (error as Error).message), status });
        }
        request.log.error({ err: errorSummary(error) }, 'grant check failed');
        return sendProblem(reply, problemDocument('server-fault', 'The check failed on the server; it was logged'));
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      try {
        const caller = await context.callers.callerOf(request);
        if (caller === undefined) {
          return sendProblem(reply, problemDocument('session-required', 'Sign in to the console again to check'));
        }
        const fields = formFields(request);
        context.callers.checkForm(request, caller, fields.csrf);
        const offending = Object.entries(fields).find(([, value]) => typeof value !== 'string');
        if (offending !== undefined || typeof fields.allow !== 'string') {
          const name = offending?.[0] ?? 'allow';
          return sendProblem(
            reply,
            problemDocument('invalid-request', 'Post the grants form: its fields as text', [
              { pointer: `/${name}`, detail: offending === undefined ? 'required' : 'must be text' },
            ]),
          );
        }
        const allow = fields.allow;
        const converted = ENTITY_FORMS.grants.bodyOf(fields);
        if ('problem' in converted) return sendProblem(reply, converted.problem);
        const name = (fields.name ?? '').trim() || UNNAMED;
        let checked: EntityView;
        try {
          const ran = await context.run('checkGrant', request, caller, {
            params: { tenantId, name },
            body: converted.body,
          });
          checked = ran.result.body as EntityView;
        } catch (error) {
          const problem = consoleProblemOf(error);
          if (problem === undefined || problem.status !== 422) throw error;
          const answer: GrantCheckAnswer = { problems: grantCheckProblems(problem, allow), warnings: [] };
          return sendJson(reply, 200, answer);
        }
        const warnings = await editedGrantWarnings(
          (id) => deps.tenants.acquire(id),
          tenantId,
          { ...(checked.document as Omit<Grant, 'name'>), name },
          AbortSignal.timeout(10_000),
        );
        const answer: GrantCheckAnswer = { problems: [], warnings: grantCheckWarnings(warnings ?? [], allow) };
        return sendJson(reply, 200, answer);
      } catch (error) {
        const problem = consoleProblemOf(error);
        if (problem !== undefined) return sendProblem(reply, problem);
        request.log.error({ err: errorSummary(error) }, 'grant check failed');
        return sendProblem(reply, problemDocument('server-fault', 'The check failed on the server; it was logged'));
      }
    },
  );

  // The console's one script: same-origin, so the pages' `script-src 'self'` admits it and nothing else.
  scope.get<{ Querystring: { v?: string } }>(CONSOLE_SCRIPT_PATH, async (request, reply) => {
    const current = request.query.v === CONSOLE_SCRIPT_VERSION;
    const etag = `"${CONSOLE_SCRIPT_VERSION}"`;
    // RFC 9110 section 13.1.2: a copy the browser holds of this very text needs no body.
    const fresh = request.headers['if-none-match'] === etag;
    return (
      reply
        .code(fresh ? 304 : 200)
        .type('text/javascript; charset=utf-8')
        // The versioned URL names this very text: kept for good (RFC 8246); any other is revalidated.
        .header('cache-control', current ? 'public, max-age=31536000, immutable' : 'no-cache')
        .header('etag', etag)
        .header('x-content-type-options', 'nosniff')
        .send(fresh ? undefined : CONSOLE_SCRIPT)
    );
  });
}
