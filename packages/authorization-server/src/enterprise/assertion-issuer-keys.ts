import { egressFetch, IssuerKeySet, type IssuerKeysSource } from '@mcpgw/auth';
import type { AuthorizationServerSettings } from '@mcpgw/config';
import type { EgressGuard, Logger } from '@mcpgw/core';
import type { FlattenedJWSInput, JWK, JWSHeaderParameters } from 'jose';

/** One identity provider trusted to issue ID-JAGs, as the tenant's settings name it. */
export type AssertionIssuerSettings = NonNullable<AuthorizationServerSettings['enterpriseManaged']>['issuers'][number];

type VerificationKey = Awaited<ReturnType<IssuerKeySet['getKey']>>;

/**
 * The verification keys of the identity providers a tenant trusts for
 * enterprise-managed authorization, by issuer. The MCP enterprise-managed
 * authorization extension, section 7.4.1: the signature "MUST" be verified
 * "using a trusted key for the issuing IdP", and keys fetched from a JWKS
 * "MUST" be fetched over TLS and rotated safely, by `kid`, without rolling
 * back to untrusted keys.
 */
export interface AssertionKeyResolver {
  /** Whether `issuer` (compared exactly, as a string) is one of the trusted ones. */
  trusts(issuer: string): boolean;
  /** The key for an assertion of `issuer` (jose `JWTVerifyGetKey` semantics and errors). */
  getKey(issuer: string, header: JWSHeaderParameters, token: FlattenedJWSInput): Promise<VerificationKey>;
  /** Stops key fetches (in flight and future): the tenant's server was replaced. */
  close(): void;
}

export interface AssertionKeyResolverOptions {
  /**
   * The egress guard of the tenant's outbound fetches: these issuers are
   * written by tenant admins, so their JWKS and discovery fetches connect
   * only where it allows, as for the tenant's other issuers.
   */
  readonly egress?: EgressGuard | undefined;
  /** For tests without a guard; default the global fetch. Ignored when `egress` is given. */
  readonly fetch?: typeof fetch;
  readonly logger: Logger;
  readonly now?: () => number;
}

/**
 * Keys from `jwksUri`, from the `jwks_uri` of the issuer's discovery
 * metadata, or pinned inline, through the resource server's own JWKS cache
 * (`IssuerKeySet` of @mcpgw/auth: known keys never wait on the network, an
 * unknown `kid` refetches at most once per cooldown, a failed refresh keeps
 * the known keys). Throws TypeError at construction for an inline private
 * or symmetric key, or an issuer listed twice.
 */
export function createAssertionKeyResolver(
  issuers: readonly AssertionIssuerSettings[],
  options: AssertionKeyResolverOptions,
): AssertionKeyResolver {
  const closing = new AbortController();
  const fetchImpl = options.egress === undefined ? (options.fetch ?? globalThis.fetch) : egressFetch(options.egress);
  const now = options.now ?? Date.now;
  const sets = new Map<string, IssuerKeySet>();
  for (const entry of issuers) {
    if (sets.has(entry.issuer)) {
      throw new TypeError(`authorizationServer.enterpriseManaged.issuers: ${entry.issuer} is listed twice`);
    }
    sets.set(
      entry.issuer,
      new IssuerKeySet({
        issuer: entry.issuer,
        source: keysSource(entry),
        fetch: fetchImpl,
        now,
        logger: options.logger.child({ assertionIssuer: entry.issuer }),
        closed: closing.signal,
      }),
    );
  }
  return {
    trusts: (issuer) => sets.has(issuer),
    async getKey(issuer, header, token) {
      const set = sets.get(issuer);
      if (set === undefined) throw new TypeError(`${issuer} is not a trusted assertion issuer`);
      return set.getKey(header, token);
    },
    close: () => closing.abort(),
  };
}

function keysSource(entry: AssertionIssuerSettings): IssuerKeysSource {
  if (entry.jwksUri !== undefined) return { jwksUri: entry.jwksUri };
  if (entry.jwks !== undefined) {
    const keys = entry.jwks.keys as JWK[];
    for (const key of keys) {
      if ('d' in key || key.kty === 'oct') {
        throw new TypeError(
          `authorizationServer.enterpriseManaged.issuers[issuer=${entry.issuer}].jwks must hold public keys only`,
        );
      }
    }
    return { jwks: { keys } };
  }
  return { discovery: true };
}
