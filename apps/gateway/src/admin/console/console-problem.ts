import { StoreError, TenantWriteRefusal } from '@mcpgw/control-plane';
import type { FormProblem } from '@mcpgw/admin';
import { AdminProblem, problemBody, problemOfStoreError, tenantNotFound } from '@mcpgw/admin';
import { isProblemError } from '../sign-in/sign-in-problem.js';

/**
 * An operation's refusal as the admin API would answer it (admin-errors.ts
 * makes the same choices), for a page to show; undefined for an unexpected
 * error, which the page answers with a 500 that reveals nothing.
 */
export function consoleProblemOf(error: unknown): FormProblem | undefined {
  if (error instanceof AdminProblem) return problemBody(error) as unknown as FormProblem;
  if (error instanceof StoreError) return problemBody(problemOfStoreError(error)) as unknown as FormProblem;
  if (error instanceof TenantWriteRefusal) {
    return problemBody(new AdminProblem(error.type, error.detail, error.errors)) as unknown as FormProblem;
  }
  if (isProblemError(error)) return error.problem as unknown as FormProblem;
  return undefined;
}

/** The 404 of a tenant that does not exist (or is not the caller's): the whole answer, not a form's refusal. */
export function isTenantMissing(problem: FormProblem): boolean {
  return problem.status === 404 && problem.detail === tenantNotFound().detail;
}
