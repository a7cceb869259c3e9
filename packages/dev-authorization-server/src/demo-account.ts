import type { Account } from 'oidc-provider';

/** The `sub` of the one user the development server knows; everyone who reaches it is signed in as this user. */
export const DEMO_SUBJECT = 'demo-user';

/** Its display name (OpenID Connect `name` claim, scope `profile`). */
export const DEMO_NAME = 'Demo User';

/** oidc-provider's `findAccount`: the demo user, or nobody. */
export function findDemoAccount(_ctx: unknown, id: string): Account | undefined {
  if (id !== DEMO_SUBJECT) return undefined;
  return { accountId: DEMO_SUBJECT, claims: () => ({ sub: DEMO_SUBJECT, name: DEMO_NAME }) };
}
