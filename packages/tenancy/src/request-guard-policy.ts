import { isLoopbackHost } from '@mcpgw/config';

/**
 * DNS-rebinding protection (2026-07-28 transports, Security & Endpoint:
 * "Servers MUST validate the Origin header on all incoming connections").
 * A rebinding page reaches a loopback server under the attacker's host name,
 * so both `Host` and, when present, `Origin` must name this gateway.
 */
export interface RequestGuardOptions {
  /** HOST the gateway binds to. */
  bindHost: string;
  /** PUBLIC_URL, when configured. */
  publicUrl: string | undefined;
  /** ALLOWED_ORIGINS. */
  allowedOrigins: readonly string[];
  /** Routes that authenticate every request themselves and are reached by address (`/metrics` with METRICS_TOKEN). */
  unguardedRoutes?: readonly string[];
}

export type GuardVerdict = { ok: true } | { ok: false; reason: string };

/** The Host/Origin decision alone, for one request's headers. */
export function createRequestGuard(
  options: RequestGuardOptions,
): (host: string | undefined, origin: string | undefined) => GuardVerdict {
  const loopbackBind = isLoopbackHost(options.bindHost);
  const publicHost = options.publicUrl === undefined ? undefined : new URL(options.publicUrl).host;
  const origins = new Set(options.allowedOrigins);
  if (options.publicUrl !== undefined) origins.add(new URL(options.publicUrl).origin);

  const hostAllowed = (host: string): boolean => {
    if (host === publicHost) return true;
    // On a loopback bind, any loopback name and port reaches only this machine.
    return loopbackBind && isLoopbackHost(hostnameOf(host));
  };

  const originAllowed = (origin: string): boolean => {
    if (origins.has(origin)) return true;
    try {
      const url = new URL(origin);
      return loopbackBind && url.origin === origin && isLoopbackHost(url.hostname);
    } catch {
      return false;
    }
  };

  return (host, origin) => {
    if (host === undefined || !hostAllowed(host.toLowerCase())) {
      return { ok: false, reason: 'Forbidden: the Host header does not name this gateway' };
    }
    if (origin !== undefined && !originAllowed(origin)) {
      return { ok: false, reason: 'Forbidden: this Origin is not allowed (see ALLOWED_ORIGINS)' };
    }
    return { ok: true };
  };
}

/** `example.com:8080` → `example.com`; `[::1]:80` → `::1`. */
function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}
