import type { Account } from 'oidc-provider';

/** The `sub` of the demo login's one user; everyone who reaches a demo login is signed in as this user. */
export const DEMO_SUBJECT = 'demo-user';

/** Its display name (the `name` claim of its access tokens). */
export const DEMO_NAME = 'Demo User';

/** Its e-mail address (`.invalid`, RFC 2606: it reaches nobody). */
export const DEMO_EMAIL = 'demo-user@example.invalid';

/** oidc-provider's `findAccount` for the demo login: the demo user, or nobody. */
export function findDemoAccount(_ctx: unknown, id: string): Account | undefined {
  if (id !== DEMO_SUBJECT) return undefined;
  return {
    accountId: DEMO_SUBJECT,
    claims: () => ({ sub: DEMO_SUBJECT, name: DEMO_NAME, email: DEMO_EMAIL, groups: [] }),
  };
}
