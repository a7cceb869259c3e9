/**
 * The requests the interaction handler answers, below the issuer's path:
 * `/interaction/{uid}` (GET shows the page, POST takes its form) and
 * `/callback` (GET, where the upstream identity provider sends the browser
 * back, OpenID Connect Core 1.0 section 3.1.2.5).
 */
export type InteractionRoute = { kind: 'interaction'; uid: string } | { kind: 'callback' };

// oidc-provider's uids are nanoids (21 characters of A-Za-z0-9_-); a bound keeps junk out of lookups.
const INTERACTION = /^\/interaction\/([A-Za-z0-9_-]{1,64})$/;

/**
 * The route of a path relative to the issuer's (`/interaction/abc`,
 * `/callback`, no query), or undefined for any other path: that one is
 * oidc-provider's.
 */
export function interactionRouteOf(pathUnderIssuer: string): InteractionRoute | undefined {
  if (pathUnderIssuer === '/callback') return { kind: 'callback' };
  const uid = INTERACTION.exec(pathUnderIssuer)?.[1];
  return uid === undefined ? undefined : { kind: 'interaction', uid };
}
