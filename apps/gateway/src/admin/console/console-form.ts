import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FormFields } from '@mcpgw/admin';

/** A console form is small; past this it is refused before it is read (413). */
export const FORM_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Reads `application/x-www-form-urlencoded` bodies (what an HTML form posts,
 * HTML Living Standard 4.10.21.7) in the console's scope only: the MCP
 * endpoint and the admin API stay JSON only.
 */
export function acceptForms(scope: FastifyInstance): void {
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
    (_request, body, done) => {
      const fields: Record<string, string> = {};
      // A repeated name keeps its first value: no form of the console repeats one.
      for (const [name, value] of new URLSearchParams(body as string)) {
        if (!Object.hasOwn(fields, name)) fields[name] = value;
      }
      done(null, fields);
    },
  );
}

/** The fields a form posted (empty when it posted none, or something else than a form). */
export function formFields(request: FastifyRequest): FormFields {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  return body as FormFields;
}
