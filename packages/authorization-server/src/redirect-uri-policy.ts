import { isLoopbackHostname } from './loopback.js';

/**
 * Why a client's redirect URI is refused, or undefined when it is accepted:
 * `https` anywhere, or `http` on a loopback host only (RFC 8252 §7.3,
 * "Loopback Interface Redirection"; §8.3 keeps plain http to loopback, where
 * the response never leaves the machine). Private-use schemes (§7.1) and
 * anything else are refused until the clients module's redirect rules replace
 * this default: registration is open, so the redirect is what stands between
 * a code and whoever registered it. No fragment (RFC 6749 §3.1.2).
 */
export function refusedRedirectUri(uri: string): string | undefined {
  const url = URL.parse(uri);
  if (url === null) return `${JSON.stringify(uri)} is not an absolute URI`;
  if (uri.includes('#')) return `${uri} must not have a fragment`;
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && isLoopbackHostname(url.hostname)) return undefined;
  return `${uri} is refused: this authorization server accepts https redirect URIs and http ones on a loopback address (127.0.0.1, [::1], localhost) only`;
}
