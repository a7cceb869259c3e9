import { ASYMMETRIC_ALGORITHMS } from '@mcpgw/core';
import { z } from 'zod';

export { ASYMMETRIC_ALGORITHMS };

// zod runs refinements after a failed format check too: an unparseable value must not throw here.
const httpsOrLoopbackUrl = z.url({ protocol: /^https?$/ }).refine((value) => {
  if (!URL.canParse(value)) return true;
  const url = new URL(value);
  return url.protocol === 'https:' || ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}, 'must be an https URL (http is allowed only for loopback addresses)');

const jwk = z.looseObject({ kty: z.string() }).refine((key) => !('d' in key), 'must be a public key (no "d")');

const KEY_SOURCES = ['jwksUri', 'discovery', 'jwks'] as const;

/** An identity provider the tenant trusts. Exactly one of jwksUri, discovery, jwks says where its keys come from. */
const realIssuer = z
  .strictObject({
    /** The exact `iss` value of its tokens. */
    issuer: httpsOrLoopbackUrl,
    jwksUri: httpsOrLoopbackUrl.optional(),
    /** Fetch the issuer's RFC 8414 / OpenID Connect metadata and use its jwks_uri. */
    discovery: z.literal(true).optional(),
    /** Pinned keys (air-gapped sites): public JWKs only. */
    jwks: z.strictObject({ keys: z.array(jwk).min(1) }).optional(),
    algorithms: z.array(z.enum(ASYMMETRIC_ALGORITHMS)).min(1).default(['RS256', 'PS256', 'ES256', 'EdDSA']),
    /** Audiences accepted besides the tenant's canonical URI, for IdPs that cannot put it in `aud`. */
    audiences: z.array(z.string().min(1)).default([]),
    /**
     * Accepted JOSE `typ` values; "none" means the header may be absent. RFC
     * 9068 section 4: `at+jwt` only by default; `jwt` and "none" also admit
     * the issuer's ID tokens (RFC 8725 section 3.11).
     */
    tokenTypes: z
      .array(z.enum(['at+jwt', 'jwt', 'none']))
      .min(1)
      .default(['at+jwt']),
    scopeClaim: z.string().min(1).default('scope'),
    groupsClaim: z.string().min(1).optional(),
    clockToleranceSeconds: z.number().int().min(0).max(60).default(30),
    /** RFC 7662 introspection for opaque tokens. */
    introspection: z
      .strictObject({
        endpoint: httpsOrLoopbackUrl,
        clientId: z.string().min(1),
        clientSecret: z.string().min(1),
        cacheMaxSeconds: z.number().int().min(0).max(3600).default(300),
        /**
         * Accept active answers without `aud` (for servers that never return
         * one). Weakens MCP "Token Audience Binding": needs `clientIds`.
         */
        dangerouslyAcceptMissingAudience: z.boolean().default(false),
        /** When given, an answer's `client_id` must be one of these. */
        clientIds: z.array(z.string().min(1)).min(1).optional(),
      })
      .refine((i) => !i.dangerouslyAcceptMissingAudience || i.clientIds !== undefined, {
        message:
          '"dangerouslyAcceptMissingAudience": true needs "clientIds", a non-empty list of the clients whose ' +
          'audience-less tokens are accepted (otherwise any token of this issuer, minted for any API or tenant, would be)',
        path: ['clientIds'],
      })
      .optional(),
    /** Advertised in the protected resource metadata; default: the issuer itself. */
    authorizationServer: httpsOrLoopbackUrl.optional(),
  })
  .superRefine((i, ctx) => {
    const given = KEY_SOURCES.filter((key) => i[key] !== undefined);
    if (given.length === 1 || i.introspection !== undefined) return;
    // Pointed at a field to change: where one belongs when none is given, each extra one when several are.
    for (const key of given.length === 0 ? ['jwksUri'] : given.slice(1)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message:
          'give exactly one of "jwksUri", "discovery": true or "jwks" (or only "introspection" for opaque tokens)',
      });
    }
  });

/** The tenant's hosted authorization server with the demo login (loopback only; never beside real issuers). */
const devAuthorizationServerIssuer = z.strictObject({ development: z.literal(true) });

export const issuerSchema = z.union([devAuthorizationServerIssuer, realIssuer]);

// An opaque token names no issuer: trying several introspection endpoints
// would hand one identity provider's tokens to another.
const issuerList = z
  .array(issuerSchema)
  .refine((issuers) => issuers.filter((i) => 'introspection' in i && i.introspection !== undefined).length <= 1, {
    message: 'at most one issuer per tenant may use introspection',
  });

/**
 * A tenant's auth settings while it is being set up through the admin API:
 * its issuers may still be none (it is not served until it has one).
 */
export const tenantAuthDraftSchema = z.strictObject({
  issuers: issuerList,
  /** Scopes every token must carry to use this tenant at all; missing → 403 insufficient_scope. */
  requiredScopes: z
    .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be an RFC 6749 scope token'))
    .default([]),
  /** Listed in the protected resource metadata; default: requiredScopes plus every scope a grant matches on. */
  scopesSupported: z.array(z.string().min(1)).optional(),
});

/** A served tenant's auth settings: at least one issuer. */
export const tenantAuthSchema = tenantAuthDraftSchema.extend({
  issuers: issuerList.min(1, 'a tenant that authenticates needs at least one issuer'),
});

const stringList = z.array(z.string().min(1)).min(1);

export const grantSchema = z.strictObject({
  name: z.string().min(1),
  /** Every listed matcher must hold (AND); within one, any value (OR). `{}` matches every authenticated caller. */
  match: z.strictObject({
    scopes: stringList.optional(),
    groups: stringList.optional(),
    subjects: stringList.optional(),
    clientIds: stringList.optional(),
    issuers: stringList.optional(),
  }),
  allow: z
    .array(
      z.strictObject({
        source: z.string().min(1),
        /** Patterns: `*` within a path segment, `**` across; absent = the whole source. */
        uris: stringList.optional(),
      }),
    )
    .min(1),
});

export type IssuerEntry = z.output<typeof issuerSchema>;
export type TenantAuth = z.output<typeof tenantAuthSchema>;
export type GrantEntry = z.output<typeof grantSchema>;
