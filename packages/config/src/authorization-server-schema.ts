import { z } from 'zod';

/**
 * A tenant's hosted OAuth 2.1 authorization server (docs/authorization-server.md):
 * the gateway is the authorization server hosted connectors talk to, under
 * the tenant's own path (`${PUBLIC_URL}/t/{id}/oauth`), and signs users in at
 * the tenant's identity provider (the upstream) over OpenID Connect. The
 * connector's parameters (its client, `resource`, scopes) never reach the
 * upstream: the gateway is the upstream's one client.
 */

const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be an RFC 6749 scope token');

// zod runs refinements after a failed format check too: an unparseable value must not throw here.
const httpsOrLoopbackUrl = z.url({ protocol: /^https?$/ }).refine((value) => {
  if (!URL.canParse(value)) return true;
  const url = new URL(value);
  return url.protocol === 'https:' || ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}, 'must be an https URL (http is allowed only for loopback addresses)');

/** A claim of the upstream's ID token or userinfo, by name; a dotted path reaches a nested one (`realm_access.roles`). */
const claimPath = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_:/.$-]+$/, 'must be a claim name, or a dotted path to a nested claim');

/**
 * The tenant's identity provider, an OpenID Connect provider where the
 * gateway is registered as one confidential (or public) client. Its
 * endpoints come from its discovery document (OpenID Connect Discovery 1.0
 * section 4), or are given for a provider without one.
 */
const openIdUpstream = z.strictObject({
  issuer: httpsOrLoopbackUrl,
  clientId: z.string().min(1).max(500),
  /** Sealed in the control plane, never returned; absent: a public client (PKCE alone). */
  clientSecret: z.string().min(1).max(2000).optional(),
  /** Requested at the upstream; `openid` is required (OpenID Connect Core 1.0 section 3.1.2.1). */
  scopes: z
    .array(scopeToken)
    .min(1)
    .default(['openid', 'profile', 'email'])
    .refine((scopes) => scopes.includes('openid'), 'must include "openid"'),
  /** Endpoints for a provider without a discovery document; absent: read `${issuer}/.well-known/openid-configuration`. */
  endpoints: z
    .strictObject({
      authorization: httpsOrLoopbackUrl,
      token: httpsOrLoopbackUrl,
      jwks: httpsOrLoopbackUrl,
    })
    .optional(),
});

/** The loopback-only demo login of `npm start`: every visitor is the demo user. Operators only. */
const demoUpstream = z.strictObject({ demo: z.literal(true) });

/**
 * Where the token's claims come from: for each claim the gateway's access
 * token carries, the upstream claim it is taken from. Grants match on
 * `sub`, `groups` and the token's scopes (docs/configuration.md).
 */
const claimMappingSchema = z
  .strictObject({
    subject: claimPath.default('sub'),
    email: claimPath.default('email'),
    name: claimPath.default('name'),
    /** Group or role names, as grants' `match.groups` see them: `groups`, `roles`, `realm_access.roles`. */
    groups: claimPath.default('groups'),
    /** Further claims copied into the access token, token claim name → upstream path. */
    extra: z.record(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/), claimPath).default({}),
  })
  .prefault({});

/**
 * Known connectors' Client ID Metadata Document hosts, so an allowlist can
 * name a connector instead of its URL.
 */
export const CONNECTOR_PRESETS = ['claude'] as const;

const clientPolicySchema = z
  .strictObject({
    /**
     * Client ID Metadata Documents (`client_id` is an https URL the server
     * fetches): `open` trusts any, `off` none; an allowlist names client
     * URLs, hosts, or connector presets.
     */
    metadataDocuments: z
      .union([
        z.enum(['open', 'off']),
        z.strictObject({
          allow: z
            .array(
              z.union([
                z.enum(CONNECTOR_PRESETS).transform((preset) => ({ preset })),
                // The parsed form of a preset, so parsed settings validate again unchanged.
                z.strictObject({ preset: z.enum(CONNECTOR_PRESETS) }),
                httpsOrLoopbackUrl,
                z.string().regex(/^[a-z0-9.-]+$/),
              ]),
            )
            .min(1),
        }),
      ])
      .default('open'),
    /** Dynamic client registration (RFC 7591), the fallback for clients without a metadata document. */
    registration: z
      .strictObject({
        enabled: z.boolean().default(true),
        /** Most clients registered at once; one more is refused until unused ones expire. */
        maxClients: z.int().min(1).max(100_000).default(1000),
        /** A registered client that has not been used for this many days is deleted. */
        unusedExpiryDays: z.int().min(1).max(365).default(30),
      })
      .prefault({}),
  })
  .prefault({});

const tokenLifetimesSchema = z
  .strictObject({
    /** RFC 9068 access tokens: short-lived, a refresh token renews them. */
    accessTokenSeconds: z.int().min(60).max(3600).default(900),
    /** A refresh token rotates on every use; its chain ends this long after the sign-in. */
    refreshTokenDays: z.int().min(1).max(90).default(30),
    /** Whether the JWT bearer grant of enterprise-managed authorization also issues a refresh token. */
    refreshTokensForAssertions: z.boolean().default(false),
  })
  .prefault({});

/** An identity provider whose identity assertion grants (ID-JAG) the token endpoint accepts (RFC 7523). */
const assertionIssuerSchema = z
  .strictObject({
    issuer: httpsOrLoopbackUrl,
    jwksUri: httpsOrLoopbackUrl.optional(),
    discovery: z.literal(true).optional(),
    jwks: z.strictObject({ keys: z.array(z.looseObject({ kty: z.string() })).min(1) }).optional(),
  })
  .refine(
    (entry) => [entry.jwksUri, entry.discovery, entry.jwks].filter((key) => key !== undefined).length === 1,
    'give exactly one of "jwksUri", "discovery": true or "jwks"',
  );

export const authorizationServerSchema = z.strictObject({
  upstream: z.union([openIdUpstream, demoUpstream]),
  claims: claimMappingSchema,
  clients: clientPolicySchema,
  tokens: tokenLifetimesSchema,
  /** Enterprise-managed authorization: identity providers trusted to issue ID-JAGs for this tenant. */
  enterpriseManaged: z.strictObject({ issuers: z.array(assertionIssuerSchema).min(1) }).optional(),
  /** Scopes clients may request; default: the tenant's advertised scopes (`auth.scopesSupported` or derived). */
  scopes: z.array(scopeToken).optional(),
});

export type AuthorizationServerSettings = z.output<typeof authorizationServerSchema>;
export type UpstreamSettings = AuthorizationServerSettings['upstream'];
export type ClaimMapping = AuthorizationServerSettings['claims'];
export type ClientPolicy = AuthorizationServerSettings['clients'];
