import { expect } from 'vitest';
import type { AdminProblemType } from '@mcpgw/admin';
import { adminProblemRegistry, PROBLEM_TYPE_PREFIX } from '@mcpgw/admin';

/**
 * Asserts that an admin refusal is one of the registry's problem types with
 * the registry's status and title (RFC 9457 section 3.1): no route answers
 * a type, status or title of its own.
 */
export function expectRegisteredProblem(body: unknown, status: number, context = ''): void {
  const { type, title } = body as { type?: unknown; title?: unknown };
  expect(typeof type === 'string' && type.startsWith(PROBLEM_TYPE_PREFIX), `${context} type ${String(type)}`).toBe(
    true,
  );
  const name = (type as string).slice(PROBLEM_TYPE_PREFIX.length);
  expect(Object.hasOwn(adminProblemRegistry, name), `${context} ${name} is registered`).toBe(true);
  expect({ status, title }, context).toEqual({
    status: adminProblemRegistry[name as AdminProblemType].status,
    title: adminProblemRegistry[name as AdminProblemType].title,
  });
}
