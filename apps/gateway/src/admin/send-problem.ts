import type { FastifyReply } from 'fastify';
import type { AdminProblem } from '@mcpgw/admin';
import { problemBody } from '@mcpgw/admin';

/** Sends an admin API refusal as `application/problem+json` (RFC 9457 section 3), with its headers. */
export function sendProblem(reply: FastifyReply, problem: AdminProblem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return reply.code(problem.status).type('application/problem+json').send(problemBody(problem));
}
