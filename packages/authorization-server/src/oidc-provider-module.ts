import type * as OidcProviderModuleNamespace from 'oidc-provider';
import { loadOnFirstUse } from '@mcpgw/core';

type OidcProviderModule = typeof OidcProviderModuleNamespace;

/**
 * oidc-provider, read when first used instead of when this package loads.
 * Every gateway loads this package at start (its storage, its routing), but
 * oidc-provider itself (some 180 modules, about 15 MB resident and a good part
 * of a second of start on a small machine) is needed only once a tenant's
 * hosted server is made, on that tenant's first request to it, which imports
 * it with its notices routed (provider-notices.ts). The error classes and the
 * request context below are read from a provider's hooks, by then loaded:
 * `require` then returns that same module instance (Node requires an ES
 * module synchronously from 20.19 and 22.12 on, sharing the import cache).
 */
export const oidcProviderModule = loadOnFirstUse<OidcProviderModule>('oidc-provider', import.meta.url);

/** oidc-provider's error classes (`errors.InvalidGrant`, ...), resolved on first use. */
export const errors: OidcProviderModule['errors'] = new Proxy({} as OidcProviderModule['errors'], {
  get: (_target, name) => Reflect.get(oidcProviderModule().errors, name) as unknown,
});
