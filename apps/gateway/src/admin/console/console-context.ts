import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FormProblem, WritePreconditions } from '@mcpgw/admin';
import { problemPage, signedOutPage, signInPath, tenantConsolePath } from '@mcpgw/admin';
import { errorSummary } from '@mcpgw/core';
import type { AdminDeps } from '../admin-route.js';
import type { OperationOutcome } from '../admin-operation-runner.js';
import { operationById, runAdminOperation } from '../admin-operation-runner.js';
import type { ConsoleSignIn } from '../sign-in/admin-sign-in.js';
import type { ConsoleCaller, ConsoleCallers } from './console-caller.js';
import { consoleProblemOf } from './console-problem.js';
import { sendPage } from './console-reply.js';

/** What every console route works with. */
export interface ConsoleContext {
  readonly deps: AdminDeps;
  readonly callers: ConsoleCallers;
  readonly signIn: ConsoleSignIn;
  /**
   * Runs an admin API operation (by its operationId) for the page's caller:
   * the very row the JSON route serves, with its access rule, schemas,
   * handler, audit and revision wait.
   */
  run(
    operationId: string,
    request: FastifyRequest,
    caller: ConsoleCaller,
    input: { params: unknown; query?: unknown; body?: unknown; preconditions?: WritePreconditions },
  ): Promise<OperationOutcome>;
}

export function createConsoleContext(deps: AdminDeps, callers: ConsoleCallers, signIn: ConsoleSignIn): ConsoleContext {
  return {
    deps,
    callers,
    signIn,
    async run(operationId, request, caller, input) {
      return runAdminOperation(operationById(deps.routes(), operationId), deps, {
        principal: caller.principal,
        params: input.params,
        query: input.query ?? {},
        body: input.body,
        preconditions: input.preconditions ?? {},
        request,
        // A page waits for its operation; a closed connection leaves nothing to answer (the preview stops early).
        signal: request.raw.closed ? AbortSignal.abort() : AbortSignal.timeout(30_000),
      });
    },
  };
}

/** The page for a refusal that is the whole answer, with the API's status. */
export function sendProblemPage(reply: FastifyReply, problem: FormProblem, caller?: ConsoleCaller): FastifyReply {
  return sendPage(reply, problem.status, problemPage(problem, caller?.viewer));
}

/** A tenant page without a (valid) session: 401 and a real link that signs in and comes back. */
export function sendSignedOut(
  reply: FastifyReply,
  request: FastifyRequest,
  tenantId: string,
  reason?: string,
): FastifyReply {
  // A page reached by GET comes back to itself; a form posted while signed out to its page.
  const back = request.method === 'GET' ? request.url : request.url.replace(/\/(delete|test|sign-out)$/, '');
  return sendPage(
    reply,
    401,
    signedOutPage({
      tenantId,
      signInHref: signInPath(
        tenantId,
        back.startsWith(tenantConsolePath(tenantId)) ? back : tenantConsolePath(tenantId),
      ),
      ...(reason === undefined ? {} : { reason }),
    }),
  );
}

/**
 * Answers what a console route threw: an admin API refusal as its problem
 * page (an expired session as the signed-out page), anything else as a 500
 * whose cause is only logged.
 */
export function sendFailure(
  reply: FastifyReply,
  request: FastifyRequest,
  error: unknown,
  tenantId: string | undefined,
): FastifyReply {
  const problem = consoleProblemOf(error);
  if (problem !== undefined && problem.status === 401 && tenantId !== undefined) {
    return sendSignedOut(reply, request, tenantId, problem.detail);
  }
  if (problem !== undefined) return sendProblemPage(reply, problem);
  request.log.error({ err: errorSummary(error) }, 'admin console request failed');
  return sendProblemPage(reply, {
    title: 'Internal server error',
    status: 500,
    detail: 'The request failed on the server; it was logged',
  });
}
