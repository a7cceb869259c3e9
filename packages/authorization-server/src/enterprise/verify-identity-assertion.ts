import { KeysUnavailableError } from '@mcpgw/auth';
import { ASYMMETRIC_ALGORITHMS } from '@mcpgw/core';
import {
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyOptions,
  type ProtectedHeaderParameters,
} from 'jose';
import type { AssertionKeyResolver } from './assertion-issuer-keys.js';
import { AssertionRefused } from './assertion-refused.js';

/**
 * The JOSE `typ` of an ID-JAG: draft-ietf-oauth-identity-assertion-authz-grant
 * section 3 ("The `typ` of the JWT indicated in the JWT header MUST be
 * `oauth-id-jag+jwt`", after RFC 8725 section 3.11), checked by the resource
 * authorization server (section 4.4.1). Compared exactly: an ID token or an
 * access token of the same IdP is as well signed, and must not pass for one.
 */
export const ID_JAG_TYPE = 'oauth-id-jag+jwt';

/**
 * The longest an assertion may live (`exp` - `iat`), and how far past now
 * its `exp` may lie. The MCP enterprise-managed authorization extension,
 * section 7.4.2: ID-JAGs "MUST be short-lived"; the draft's example token
 * exchange response gives `expires_in` 300. It also bounds how long the
 * replay store keeps a `jti`.
 */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;

/** Clock skew allowed on `exp`, `nbf` and `iat` ("accounting for minimal clock skew", extension section 7.4.2). */
export const ASSERTION_CLOCK_TOLERANCE_SECONDS = 30;

/** Larger assertions are refused before any parsing (an ID-JAG is a few hundred bytes to a few kilobytes). */
export const MAX_ASSERTION_LENGTH = 16 * 1024;

/**
 * Header parameters that carry or point at keys chosen by whoever made the
 * token (RFC 7515 sections 4.1.2 to 4.1.6); keys come only from the
 * issuer's configuration (RFC 8725 section 3.10), so these are refused
 * outright, as the resource server refuses them on access tokens.
 */
const KEY_REFERENCE_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;
const ASYMMETRIC = new Set<string>(ASYMMETRIC_ALGORITHMS);

/** What this authorization server expects of an assertion presented at its token endpoint. */
export interface AssertionExpectations {
  /** This authorization server's issuer: the assertion's `aud` (draft section 4.4.1; extension section 7.6.2). */
  readonly audience: string;
  /** The client authenticated at the token endpoint: the assertion's `client_id` (draft section 4.4.1). */
  readonly clientId: string;
  /** The tenant's resource identifiers: the assertion's `resource` must name one (extension section 7.6.2). */
  readonly resources: readonly string[];
}

/** A verified ID-JAG. */
export interface VerifiedAssertion {
  readonly issuer: string;
  readonly subject: string;
  readonly jti: string;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
  /** The assertion's resources that are this tenant's, in the assertion's order (at least one). */
  readonly resources: readonly string[];
  /** The assertion's `scope`, split; undefined when it has none. */
  readonly scopes: readonly string[] | undefined;
  /** Every claim, for the claim mapping (the assertion is an identity assertion, draft section 3). */
  readonly claims: Readonly<JWTPayload>;
}

export interface AssertionVerificationContext {
  readonly keys: AssertionKeyResolver;
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}

/**
 * Verifies an Identity Assertion JWT Authorization Grant presented with the
 * RFC 7523 JWT bearer grant: RFC 7523 section 3 and RFC 7521 section 5.2
 * (issuer, subject, audience, expiry, signature), the draft's section 3
 * claims and section 4.4.1 processing rules, and the MCP extension's
 * sections 7.4.1 (explicit algorithm allow-list, no `none`) and 7.6.2 (`aud`
 * and `resource` as a bound pair). Replay of the `jti` is the caller's check
 * (it needs the store). Throws {@link AssertionRefused} saying what was wrong.
 */
export async function verifyIdentityAssertion(
  assertion: string,
  expected: AssertionExpectations,
  ctx: AssertionVerificationContext,
): Promise<VerifiedAssertion> {
  if (assertion.length > MAX_ASSERTION_LENGTH) {
    throw new AssertionRefused('too_large', `The assertion is larger than ${MAX_ASSERTION_LENGTH} bytes`);
  }
  let header: ProtectedHeaderParameters;
  let unverified: JWTPayload;
  try {
    // Read without trusting, only to choose the issuer; jwtVerify checks everything again.
    if (assertion.split('.').length !== 3) throw new TypeError('not a compact JWS');
    header = decodeProtectedHeader(assertion);
    unverified = decodeJwt(assertion);
  } catch {
    throw new AssertionRefused('malformed', 'The assertion is not a signed JWT (RFC 7523 section 3)');
  }
  if (header.typ !== ID_JAG_TYPE) {
    throw new AssertionRefused(
      'wrong_type',
      `The assertion is not an identity assertion JWT authorization grant: its typ header must be "${ID_JAG_TYPE}"`,
    );
  }
  if (KEY_REFERENCE_HEADERS.some((name) => Object.hasOwn(header, name))) {
    throw new AssertionRefused(
      'key_reference_header',
      'The assertion names or carries its own key (jku, x5u, jwk or x5c header); that is not accepted',
    );
  }
  const issuer = unverified.iss;
  if (typeof issuer !== 'string' || !ctx.keys.trusts(issuer)) {
    throw new AssertionRefused(
      'unknown_issuer',
      "The assertion's issuer is not an identity provider this authorization server trusts (authorizationServer.enterpriseManaged.issuers)",
    );
  }
  if (typeof header.alg !== 'string' || !ASYMMETRIC.has(header.alg)) {
    throw new AssertionRefused(
      'algorithm_not_allowed',
      `The assertion's signing algorithm is not allowed (allowed: ${ASYMMETRIC_ALGORITHMS.join(', ')})`,
    );
  }

  const nowSeconds = Math.floor(ctx.now() / 1000);
  const options: JWTVerifyOptions = {
    algorithms: [...ASYMMETRIC_ALGORITHMS],
    issuer,
    audience: expected.audience,
    typ: ID_JAG_TYPE,
    clockTolerance: ASSERTION_CLOCK_TOLERANCE_SECONDS,
    currentDate: new Date(ctx.now()),
    // Draft section 3: iss, sub, aud, client_id, jti, exp and iat are REQUIRED.
    requiredClaims: ['sub', 'exp', 'iat', 'jti', 'client_id'],
  };
  const payload = await verifySignature(assertion, issuer, options, ctx.keys, expected.audience);

  const iat = payload.iat!;
  const exp = payload.exp!;
  if (iat > nowSeconds + ASSERTION_CLOCK_TOLERANCE_SECONDS) {
    throw new AssertionRefused('issued_in_future', 'The assertion was issued in the future (its iat)');
  }
  if (exp - iat > MAX_ASSERTION_LIFETIME_SECONDS || exp > nowSeconds + MAX_ASSERTION_LIFETIME_SECONDS) {
    throw new AssertionRefused(
      'lifetime_too_long',
      `The assertion lives longer than ${MAX_ASSERTION_LIFETIME_SECONDS} seconds (exp too far after iat or now); identity assertions must be short-lived`,
    );
  }
  const subject = nonEmptyString(payload.sub, 'sub');
  const jti = nonEmptyString(payload.jti, 'jti');
  if (payload.client_id !== expected.clientId) {
    throw new AssertionRefused(
      'wrong_client',
      'The assertion was issued for another client: its client_id must be the client authenticated here',
    );
  }
  const resources = assertedResources(payload.resource, expected.resources);
  const scope = payload.scope;
  if (scope !== undefined && typeof scope !== 'string') {
    throw new AssertionRefused('invalid_claim', 'The assertion\'s "scope" claim must be a space-delimited string');
  }
  const scopes = scope === undefined ? undefined : scope.split(' ').filter((token) => token !== '');
  return { issuer, subject, jti, expiresAt: exp, resources, scopes, claims: payload };
}

async function verifySignature(
  assertion: string,
  issuer: string,
  options: JWTVerifyOptions,
  keys: AssertionKeyResolver,
  audience: string,
): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(assertion, (header, token) => keys.getKey(issuer, header, token), options);
    return payload;
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw refusalFor(error, audience);
    // No `kid` and several keys of the right type: try each (jose's documented way).
    for await (const key of error) {
      try {
        const { payload } = await jwtVerify(assertion, key, options);
        return payload;
      } catch (attempt) {
        if (!(attempt instanceof errors.JWSSignatureVerificationFailed)) throw refusalFor(attempt, audience);
      }
    }
    throw new AssertionRefused('bad_signature', "The assertion's signature is invalid");
  }
}

/** Public, assertion-free descriptions of jose's failures. */
function refusalFor(error: unknown, audience: string): AssertionRefused {
  if (error instanceof AssertionRefused) return error;
  if (error instanceof KeysUnavailableError) {
    return new AssertionRefused(
      'keys_unavailable',
      "The assertion issuer's signing keys are unavailable right now; try again later",
    );
  }
  if (error instanceof errors.JWTExpired) return new AssertionRefused('expired', 'The assertion has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') {
      return new AssertionRefused(
        'wrong_audience',
        `The assertion was issued for another authorization server: its aud must be ${audience}`,
      );
    }
    if (error.claim === 'nbf') return new AssertionRefused('not_yet_valid', 'The assertion is not valid yet');
    if (error.reason === 'missing') {
      return new AssertionRefused('missing_claim', `The assertion has no "${error.claim}" claim`);
    }
    return new AssertionRefused('invalid_claim', `The assertion's "${error.claim}" claim is invalid`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new AssertionRefused('bad_signature', "The assertion's signature is invalid");
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return new AssertionRefused('no_matching_key', "No key of the assertion's issuer matches the assertion");
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new AssertionRefused('algorithm_not_allowed', "The assertion's signing algorithm is not allowed");
  }
  // Anything else (a key jose refuses to use, an unsupported feature): fail closed.
  return new AssertionRefused('malformed', 'The assertion could not be verified');
}

function nonEmptyString(value: unknown, claim: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 1024) {
    throw new AssertionRefused('invalid_claim', `The assertion's "${claim}" claim must be a non-empty string`);
  }
  return value;
}

/**
 * Draft section 3: `resource` is "either a single URI or an array of URIs";
 * the MCP extension makes it the MCP server's resource identifier (section
 * 4.3), and section 7.6.2 says it "MUST" match this server's registered
 * resources. Absent, the `aud` alone would not say which server's tokens
 * the IdP meant, so this server requires it.
 */
function assertedResources(claim: unknown, ours: readonly string[]): string[] {
  const listed = typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim : undefined;
  if (listed === undefined || listed.length === 0) {
    throw new AssertionRefused(
      'missing_resource',
      "The assertion names no resource: its resource claim must be this tenant's MCP server",
    );
  }
  const known = new Set(ours);
  const matching = listed.filter((item): item is string => typeof item === 'string' && known.has(item));
  if (matching.length === 0) {
    throw new AssertionRefused(
      'wrong_resource',
      `The assertion is for another resource: its resource claim must be ${ours[0] ?? "this tenant's MCP server"}`,
    );
  }
  return [...new Set(matching)];
}
