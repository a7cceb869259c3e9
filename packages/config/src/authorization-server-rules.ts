import type { AuthorizationServerSettings } from './authorization-server-schema.js';
import type { TenantEntry } from './bootstrap-schema.js';
import type { ConfigIssue } from './config-error.js';
import { formatPath } from './config-error.js';
import type { EnvConfig } from './env.js';
import { isLoopbackHost } from './env.js';

/**
 * At most this many `claims.extra` entries: each is copied into every access
 * token the tenant's server signs, and a token travels in a header on every
 * MCP request (servers commonly refuse headers past 8 KiB).
 */
export const MAX_EXTRA_CLAIMS = 32;

/**
 * Claims the hosted server sets itself (RFC 9068 section 2.2, RFC 7519
 * section 4.1, OpenID Connect Core 1.0 section 2, RFC 8693 section 4): a
 * mapping may not supply them, or an upstream claim could name the token's
 * audience, issuer, client or scopes. The mapped identity claims are set by
 * their own keys (`subject`, `email`, `name`, `groups`).
 */
export const RESERVED_TOKEN_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'client_id',
  'scope',
  'auth_time',
  'acr',
  'amr',
  'azp',
  'nonce',
  'sid',
  'cnf',
  'act',
  'may_act',
  'at_hash',
  'c_hash',
  'email',
  'name',
  'groups',
]);

/** Scopes of the authorization server itself, not of the resource: offering them needs no grant. */
const SERVER_SCOPES: ReadonlySet<string> = new Set(['openid', 'offline_access']);

/** What the tenant advertises to clients (RFC 9728 `scopes_supported`): declared, or required plus every grant's. */
export function advertisedScopes(tenant: TenantEntry): string[] {
  const required = tenant.auth?.requiredScopes ?? [];
  return (
    tenant.auth?.scopesSupported ?? [
      ...new Set([...required, ...tenant.grants.flatMap((grant) => grant.match.scopes ?? [])]),
    ]
  );
}

/**
 * Every URL of the settings that the gateway fetches or sends a user to,
 * with its path under the settings: the egress policy and the rules below
 * judge each.
 */
export function authorizationServerUrls(
  settings: AuthorizationServerSettings,
): { path: (string | number)[]; url: string }[] {
  const urls: { path: (string | number)[]; url: string }[] = [];
  const upstream = settings.upstream;
  if ('issuer' in upstream) {
    urls.push({ path: ['upstream', 'issuer'], url: upstream.issuer });
    for (const [key, url] of Object.entries(upstream.endpoints ?? {})) {
      urls.push({ path: ['upstream', 'endpoints', key], url });
    }
  }
  for (const [i, entry] of (settings.enterpriseManaged?.issuers ?? []).entries()) {
    urls.push({ path: ['enterpriseManaged', 'issuers', i, 'issuer'], url: entry.issuer });
    if (entry.jwksUri !== undefined) {
      urls.push({ path: ['enterpriseManaged', 'issuers', i, 'jwksUri'], url: entry.jwksUri });
    }
  }
  return urls;
}

/** Whether `url` is the gateway's own origin: PUBLIC_URL's, or the loopback port it listens on. */
function isGatewayOrigin(url: URL, env: EnvConfig): boolean {
  if (env.PUBLIC_URL !== undefined && URL.canParse(env.PUBLIC_URL) && new URL(env.PUBLIC_URL).origin === url.origin) {
    return true;
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return env.PORT !== 0 && port === env.PORT && isLoopbackHost(url.hostname) && isLoopbackHost(env.HOST);
}

/**
 * The rules of a tenant's hosted authorization server beyond its schema
 * (docs/configuration.md, `authorizationServer`):
 *
 * - the demo login signs every visitor in as the demo user: loopback binds only,
 *   as the development issuer;
 * - the upstream is another server, never the gateway itself (the sign-in would
 *   redirect to itself);
 * - the offered `scopes` hold every required scope (else no token it signs is
 *   ever admitted: 403 insufficient_scope) and only scopes the tenant
 *   advertises (RFC 9728 `scopes_supported`, which clients choose from: MCP
 *   2026-07-28, Authorization, "Scope Selection Strategy"), so a scope no grant or
 *   requirement uses, most likely a misspelling, is refused rather than signed
 *   into tokens nothing reads;
 * - `claims.extra` is bounded and supplies no claim the server sets itself;
 * - a tenant with one is not anonymous (it authenticates through it).
 */
export function authorizationServerIssues(tenant: TenantEntry, at: string, env: EnvConfig): ConfigIssue[] {
  const settings = tenant.authorizationServer;
  if (settings === undefined) return [];
  const here = `${at}.authorizationServer`;
  const issues: ConfigIssue[] = [];
  if (tenant.anonymous) {
    issues.push({
      path: here,
      message: 'an anonymous tenant authenticates nobody: remove "authorizationServer" or "anonymous"',
    });
  }
  if ('demo' in settings.upstream && !isLoopbackHost(env.HOST)) {
    issues.push({
      path: `${here}.upstream.demo`,
      message: `the demo login is allowed only on a loopback bind, and HOST is ${env.HOST}`,
    });
  }
  for (const { path, url } of authorizationServerUrls(settings)) {
    if (URL.canParse(url) && isGatewayOrigin(new URL(url), env)) {
      issues.push({
        path: formatPath(path, here),
        message: 'must be another server than this gateway (the sign-in would go round in a circle)',
      });
    }
  }
  if (settings.scopes !== undefined) {
    const offered = new Set(settings.scopes);
    const advertised = new Set(advertisedScopes(tenant));
    for (const scope of tenant.auth?.requiredScopes ?? []) {
      if (!offered.has(scope)) {
        issues.push({
          path: `${here}.scopes`,
          message: `must offer the required scope "${scope}" (auth.requiredScopes): tokens without it are refused`,
        });
      }
    }
    for (const [i, scope] of settings.scopes.entries()) {
      if (advertised.has(scope) || SERVER_SCOPES.has(scope)) continue;
      issues.push({
        path: `${here}.scopes[${i}]`,
        message: `"${scope}" is not a scope this tenant uses; it advertises ${[...advertised].map((s) => `"${s}"`).join(', ') || 'none'} (auth.scopesSupported, or auth.requiredScopes and the grants' match.scopes)`,
      });
    }
  }
  const extra = Object.keys(settings.claims.extra);
  if (extra.length > MAX_EXTRA_CLAIMS) {
    issues.push({
      path: `${here}.claims.extra`,
      message: `at most ${MAX_EXTRA_CLAIMS} extra claims (every one is carried by every access token); got ${extra.length}`,
    });
  }
  for (const name of extra) {
    if (RESERVED_TOKEN_CLAIMS.has(name)) {
      issues.push({
        path: `${here}.claims.extra.${name}`,
        message: `"${name}" is a claim the authorization server sets itself; map it under another name`,
      });
    }
  }
  return issues;
}
