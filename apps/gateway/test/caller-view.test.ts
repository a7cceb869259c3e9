import { describe, expect, it } from 'vitest';
import type { Principal } from '@mcpgw/core';
import { unrestrictedScope } from '@mcpgw/core';
import type { TenantConfig } from '@mcpgw/config';
import { resolveCallerView, viewDigest } from '@mcpgw/events';
import type { TenantRuntime } from '@mcpgw/tenancy';
import { createTenantAuthenticator } from '@mcpgw/tenancy';

// What a listen stream re-resolves per event: the caller's view under the
// serving configuration, built with the real authenticator (no token is
// verified here: `accessOf` takes a principal verified when the stream
// opened). Only the runtime around it is reduced to what the view reads.

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent } as never;
const alice: Principal = { issuer: 'https://idp.one', subject: 'alice', scopes: ['read'], groups: [], expiresAt: 0 };

function runtime(auth: Partial<NonNullable<TenantConfig['auth']>> | undefined, grants: unknown[] = []): TenantRuntime {
  const config = {
    id: 'acme',
    sources: [
      { id: 'docs', type: 'static' },
      { id: 'hr', type: 'static' },
    ],
    grants,
    ...(auth === undefined
      ? {}
      : {
          auth: {
            issuers: [
              {
                issuer: 'https://idp.one',
                jwks: { keys: [] },
                algorithms: ['ES256'],
                audiences: [],
                tokenTypes: ['at+jwt'],
                scopeClaim: 'scope',
                clockToleranceSeconds: 0,
              },
            ],
            requiredScopes: [],
            ...auth,
          },
        }),
  } as unknown as TenantConfig;
  const authenticator =
    config.auth === undefined
      ? undefined
      : createTenantAuthenticator(config, {
          baseUrl: 'http://127.0.0.1:1',
          hostedIssuer: undefined,
          logger: silent,
        });
  return { config, auth: authenticator, catalog: { sources: [] } } as unknown as TenantRuntime;
}

describe('resolveCallerView', () => {
  const grant = { name: 'readers', match: { scopes: ['read'] }, allow: [{ source: 'docs' }] };

  it('resolves the caller under the serving grants, and follows a grant change', () => {
    const before = resolveCallerView(new Map([['acme', runtime({}, [grant])]]), { tenantId: 'acme', principal: alice });
    expect(before.ok && before.scope.allowsSource('docs')).toBe(true);
    const widened = runtime({}, [{ ...grant, allow: [{ source: 'docs' }, { source: 'hr' }] }]);
    const after = resolveCallerView(new Map([['acme', widened]]), { tenantId: 'acme', principal: alice });
    expect(after.ok && after.scope.allowsSource('hr')).toBe(true);
    if (!before.ok || !after.ok) throw new Error('unreachable');
    expect(viewDigest(after.runtime, after.scope)).not.toBe(viewDigest(before.runtime, before.scope));
    // The same grants under a rebuilt runtime: the same digest, so no list_changed.
    const rebuilt = resolveCallerView(new Map([['acme', runtime({}, [grant])]]), {
      tenantId: 'acme',
      principal: alice,
    });
    if (!rebuilt.ok) throw new Error('unreachable');
    expect(viewDigest(rebuilt.runtime, rebuilt.scope)).toBe(viewDigest(before.runtime, before.scope));
  });

  it('gives callers of one runtime the digest of their own view, shared only with callers of the same view', () => {
    const hr = { name: 'hr', match: { scopes: ['hr'] }, allow: [{ source: 'hr' }] };
    const serving = new Map([['acme', runtime({}, [grant, hr])]]);
    const digestOf = (principal: Principal) => {
      const view = resolveCallerView(serving, { tenantId: 'acme', principal });
      if (!view.ok) throw new Error('unreachable');
      return viewDigest(view.runtime, view.scope);
    };
    const bob: Principal = { ...alice, subject: 'bob' };
    const carol: Principal = { ...alice, subject: 'carol', scopes: ['read', 'hr'] };
    // Asked in turn on the same runtime: a digest worked out for one view is never another view's.
    const [a, b, c] = [digestOf(alice), digestOf(carol), digestOf(bob)];
    expect(b).not.toBe(a);
    expect(c).toBe(a);
    expect(digestOf(carol)).toBe(b);
  });

  it('says the access was revoked when the issuer is gone or a required scope was added', () => {
    const issuerTwo = {
      issuer: 'https://idp.two',
      jwks: { keys: [] },
      algorithms: ['ES256'],
      audiences: [],
      tokenTypes: ['at+jwt'],
      scopeClaim: 'scope',
      clockToleranceSeconds: 0,
    };
    const otherIssuer = runtime({ issuers: [issuerTwo] as never }, [grant]);
    expect(resolveCallerView(new Map([['acme', otherIssuer]]), { tenantId: 'acme', principal: alice })).toEqual({
      ok: false,
      reason: 'access-revoked',
    });
    const stricter = runtime({ requiredScopes: ['admin'] }, [grant]);
    expect(resolveCallerView(new Map([['acme', stricter]]), { tenantId: 'acme', principal: alice })).toEqual({
      ok: false,
      reason: 'access-revoked',
    });
    // A stream opened anonymously on a tenant that now authenticates has no principal to resolve.
    expect(
      resolveCallerView(new Map([['acme', runtime({}, [grant])]]), { tenantId: 'acme', principal: undefined }),
    ).toEqual({
      ok: false,
      reason: 'access-revoked',
    });
  });

  it('says the tenant is gone when it is not served, and gives an anonymous tenant everything', () => {
    expect(resolveCallerView(new Map(), { tenantId: 'acme', principal: alice })).toEqual({
      ok: false,
      reason: 'tenant-gone',
    });
    const view = resolveCallerView(new Map([['acme', runtime(undefined)]]), { tenantId: 'acme', principal: undefined });
    expect(view.ok && view.scope).toBe(unrestrictedScope);
  });
});
