import type { FastifyReply } from 'fastify';

/**
 * Sends a console page. The policy (CSP Level 3) allows nothing from
 * elsewhere: scripts only from this origin (the console's one script file,
 * `script-src 'self'`: nothing inline, no eval) and its requests only to this
 * origin (`connect-src 'self'`, the grant check), the inline stylesheet only;
 * forms post to this origin only; no other site may frame the console
 * (clickjacking).
 */
export function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header(
      'content-security-policy',
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    )
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .send(page);
}

/** After a write succeeded: the page again by GET (RFC 9110 section 15.4.4), so a reload does not repeat it. */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.header('cache-control', 'no-store').redirect(location, 303);
}
