/**
 * What a person reads for a scope on the consent page. The OpenID Connect
 * scopes have fixed meanings (OpenID Connect Core 1.0, sections 5.4 and
 * 11); any other scope is the tenant's own and is shown by its name.
 */
const KNOWN: Readonly<Record<string, string>> = {
  openid: 'Confirm who you are',
  profile: 'See your name',
  email: 'See your email address',
  offline_access: 'Stay connected when you are not using it (a refresh token)',
};

/** The sentence for a scope, or undefined for a scope of the tenant's own. */
export function scopeDescription(scope: string): string | undefined {
  return Object.hasOwn(KNOWN, scope) ? KNOWN[scope] : undefined;
}
