/** Where the console lives: `/admin/` for everyone, `/admin/tenants/{tenantId}/…` for one tenant. */
export const CONSOLE_PREFIX = '/admin';

/** The pages of one tenant, each a path under its console root. */
export const TENANT_PAGES = [
  'sources',
  'grants',
  'preview',
  'audit',
  'access',
  'issuers',
  'admin-role-bindings',
  'connected-apps',
] as const;
export type TenantPage = (typeof TENANT_PAGES)[number];

export function tenantConsolePath(tenantId: string, page?: TenantPage | string): string {
  const root = `${CONSOLE_PREFIX}/tenants/${encodeURIComponent(tenantId)}/`;
  return page === undefined ? root : `${root}${page}`;
}

/** The browser sign-in's start (docs/admin-sign-in.md), landing back on `returnTo` afterwards. */
export function signInPath(tenantId: string, returnTo: string): string {
  return `/admin/v1/tenants/${encodeURIComponent(tenantId)}/login?return_to=${encodeURIComponent(returnTo)}`;
}

const SAFE_BASE = 'http://console.invalid';

/**
 * Where a sign-in may send the browser afterwards: only a console page of the
 * very tenant signing in, as a path on this origin (never a full URL, a
 * scheme-relative `//host` or a backslash that browsers read as one), so
 * `return_to` can never be an open redirect. Answers the normalised path and
 * query, or undefined when `value` is anything else.
 */
export function consoleReturnPath(tenantId: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 512 || !value.startsWith('/') || value.startsWith('//')) {
    return undefined;
  }
  // A backslash or a control character: browsers read some as `/` or drop them.
  if ([...value].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return undefined;
  let url: URL;
  try {
    url = new URL(value, SAFE_BASE);
  } catch {
    return undefined;
  }
  if (url.origin !== SAFE_BASE) return undefined;
  const root = tenantConsolePath(tenantId);
  if (url.pathname !== root.slice(0, -1) && !url.pathname.startsWith(root)) return undefined;
  return `${url.pathname}${url.search}`;
}
