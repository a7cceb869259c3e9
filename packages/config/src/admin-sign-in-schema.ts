import { z } from 'zod';
import type { ConfigIssue } from './config-error.js';
import type { TenantCompleteness } from './tenant-completeness.js';

const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be an RFC 6749 scope token');

/**
 * How a tenant's admins sign in from a browser (docs/admin-sign-in.md): the
 * gateway is an OAuth client of the tenant's identity provider, running the
 * authorization code flow with PKCE (RFC 7636) over OpenID Connect. Absent:
 * the tenant has no browser sign-in (its login URL answers 404); API clients
 * still use bearer tokens.
 */
export const adminSignInSchema = z.strictObject({
  /** The client registered at the identity provider for the gateway's admin sign-in. */
  clientId: z.string().min(1),
  /**
   * Its secret, written as `{ "$env": "NAME" }` so it lives in the
   * environment, never in the file or the control plane. Absent: a public
   * client (PKCE alone proves the code's redeemer, RFC 7636 section 1).
   */
  clientSecret: z.string().min(1).optional(),
  /**
   * Which of the tenant's issuers signs its admins in (its OpenID Connect
   * discovery document is read at the first sign-in). Default: the tenant's
   * first issuer.
   */
  issuer: z.string().min(1).optional(),
  /** Scopes requested; `openid` makes it an OpenID Connect request (OIDC Core section 3.1.2.1). */
  scopes: z.array(scopeToken).min(1).default(['openid']),
  /**
   * The RFC 8707 resource indicator naming the admin API, sent on the
   * authorization and token requests so the access token's audience is the
   * admin API. Default: the tenant's admin resource, `${PUBLIC_URL}/admin/v1/tenants/{id}`.
   */
  resource: z.url({ protocol: /^https?$/ }).optional(),
  /** Longest a browser session lasts, whatever the access token's own expiry. */
  maxSessionSeconds: z
    .int('must be a whole number of seconds')
    .min(60, 'must be at least 60')
    .max(24 * 3600, 'must be at most 86400 (one day)')
    .default(8 * 3600),
});

export type AdminSignIn = z.output<typeof adminSignInSchema>;

/**
 * The sign-in issuer must be one the tenant trusts: a session is only as good
 * as the tokens behind it. The tenant's hosted issuer (`hostedIssuer`, when it
 * has an `authorizationServer`) is trusted without being listed in
 * `auth.issuers`, so naming it is enough (docs/authorization-server.md).
 */
export function adminSignInIssues(
  signIn: AdminSignIn | undefined,
  issuers: readonly ({ development: true } | { issuer: string })[],
  at: string,
  completeness: TenantCompleteness = 'served',
  hostedIssuer?: string,
): ConfigIssue[] {
  if (signIn === undefined) return [];
  if (hostedIssuer !== undefined && signIn.issuer === hostedIssuer) return [];
  if (issuers.length === 0 && completeness === 'being-set-up') {
    // Checked again once the tenant has issuers: each issuer write checks the whole tenant.
    return signIn.issuer === undefined
      ? []
      : [{ path: `${at}.adminSignIn.issuer`, message: "must be one of the tenant's issuers (none yet)" }];
  }
  if (issuers.length === 0) {
    return [
      {
        path: `${at}.adminSignIn`,
        message:
          hostedIssuer === undefined
            ? 'browser sign-in needs the tenant to trust an issuer (auth.issuers)'
            : `browser sign-in needs the tenant to trust an issuer (auth.issuers), or adminSignIn.issuer set to its hosted issuer ${hostedIssuer}`,
      },
    ];
  }
  if (signIn.issuer === undefined) return [];
  const known = [
    ...(hostedIssuer === undefined ? [] : [hostedIssuer]),
    ...issuers.flatMap((entry) => ('issuer' in entry ? [entry.issuer] : [])),
  ];
  if (known.includes(signIn.issuer)) return [];
  return [
    {
      path: `${at}.adminSignIn.issuer`,
      message: `must be one of the tenant's issuers (${known.join(', ') || 'only the development issuer, named by omitting this key'})`,
    },
  ];
}
