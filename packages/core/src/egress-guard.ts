import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { canonicalAddress, inPrefix, internalAddressKind } from './internal-addresses.js';
import { formatIpAddress, parseIpAddress, type IpAddress } from './ip-address.js';

/** The environment variable operators list allowed internal destinations in (packages/config reads it). */
export const EGRESS_ALLOW_SETTING = 'EGRESS_ALLOW';

/**
 * A connection the egress policy refused before anything was sent. Its
 * message names the destination, why it is refused and the setting an
 * operator would change; it goes to the people who configure the gateway
 * (the admin API's status and connection test, the logs), never to MCP
 * callers, who learn only that the source is unavailable.
 */
export class EgressRefusedError extends Error {
  override readonly name = 'EgressRefusedError';
  /** A stable code, like the system errors (`ECONNREFUSED`) a socket fails with. */
  readonly code = 'EGRESS_REFUSED';

  constructor(
    /** The host as configured. */
    readonly host: string,
    /** The address it is or resolved to (the host again for a Unix socket path). */
    readonly address: string,
    /** Why: `loopback address`, `cloud metadata address`, `Unix socket`, … */
    readonly reason: string,
  ) {
    super(
      `connection to ${host === address ? host : `${host} (${address})`} refused by the egress policy: ${reason}; ` +
        (host.startsWith('/')
          ? 'only operators may configure one'
          : `destinations a tenant admin configures must be public unless an operator allows them in ${EGRESS_ALLOW_SETTING}`),
    );
  }
}

/** The egress refusal behind `error` (followed through `cause` and AggregateError's `errors`), if any. */
export function findEgressRefusal(error: unknown, depth = 0): EgressRefusedError | undefined {
  if (error instanceof EgressRefusedError) return error;
  if (typeof error !== 'object' || error === null || depth > 8) return undefined;
  const nested = [
    (error as { cause?: unknown }).cause,
    ...(error instanceof AggregateError ? (error.errors as unknown[]) : []),
  ];
  for (const inner of nested) {
    const found = findEgressRefusal(inner, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

interface AllowedPrefix {
  readonly family: 4 | 6;
  readonly prefix: Uint8Array;
  readonly bits: number;
}

/** An operator's allowlist: address ranges and exact host names. */
export interface EgressAllowList {
  readonly prefixes: readonly AllowedPrefix[];
  readonly hosts: ReadonlySet<string>;
}

const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

const normalizeHost = (host: string): string =>
  host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');

/**
 * Why one allowlist entry is not a CIDR (`10.0.0.0/8`, `fd00::/8`), an
 * address (`127.0.0.1`, `::1`) or a host name (`minio.internal`); undefined
 * when it is one of them.
 */
export function egressAllowEntryProblem(entry: string): string | undefined {
  const [address, bits, extra] = entry.split('/');
  if (extra !== undefined) return `"${entry}" is not a CIDR, an address or a host name`;
  const parsed = parseIpAddress(address!);
  if (bits !== undefined) {
    const max = parsed?.family === 4 ? 32 : 128;
    if (parsed === undefined || !/^\d{1,3}$/.test(bits) || Number(bits) > max) {
      return `"${entry}" is not a CIDR (an address, "/" and a prefix length of at most ${parsed?.family === 4 ? 32 : 128})`;
    }
    return undefined;
  }
  if (parsed !== undefined || HOST_NAME.test(normalizeHost(entry))) return undefined;
  return `"${entry}" is not a CIDR, an address or a host name`;
}

/** Parses allowlist entries; throws TypeError naming the first bad one (the config layer reports it first). */
export function parseEgressAllowList(entries: readonly string[]): EgressAllowList {
  const prefixes: AllowedPrefix[] = [];
  const hosts = new Set<string>();
  for (const entry of entries) {
    const problem = egressAllowEntryProblem(entry);
    if (problem !== undefined) throw new TypeError(`${EGRESS_ALLOW_SETTING}: ${problem}`);
    const [text, bits] = entry.split('/') as [string, string | undefined];
    const address = parseIpAddress(text);
    if (address === undefined) {
      hosts.add(normalizeHost(entry));
      continue;
    }
    const canonical = bits === undefined ? canonicalAddress(address) : address;
    prefixes.push({
      family: canonical.family,
      prefix: canonical.bytes,
      bits: bits === undefined ? canonical.bytes.length * 8 : Number(bits),
    });
  }
  return { prefixes, hosts };
}

/**
 * The egress policy applied to one outbound connection a tenant admin
 * configured (a server-side request forgery defence, OWASP SSRF Prevention
 * Cheat Sheet): by default no loopback, link-local, cloud metadata, private,
 * CGNAT, unspecified, multicast or reserved address, nor an IPv6 address
 * carrying one of these; destinations in the operator's allowlist pass.
 *
 * The check runs on the address actually connected to: `lookup` is handed to
 * the socket (net/tls `lookup`, an http.Agent, undici's connector, pg's
 * stream), so a name that resolves to an internal address, or starts to
 * (DNS rebinding), is refused at connect time. Sockets skip `lookup` for an
 * address literal, so connectors call `checkHost` first.
 */
export interface EgressGuard {
  /**
   * Throws {@link EgressRefusedError} for a host refused without a lookup:
   * an internal address literal (any notation) or a Unix socket path.
   * Returns for an allowed name or address, and for any other name (its
   * addresses are checked by `lookup`).
   */
  checkHost(host: string): void;
  /** A `dns.lookup` that fails with {@link EgressRefusedError} when any address of the name is refused. */
  readonly lookup: LookupFunction;
}

export interface EgressGuardOptions {
  /** Allowlist entries (see {@link egressAllowEntryProblem}). */
  readonly allow?: readonly string[];
  /** Name resolution; default `dns.lookup` (tests give one that answers what they need). */
  readonly resolve?: typeof dnsLookup;
}

/** The guard for a deployment's allowlist. Throws TypeError for a bad entry. */
export function createEgressGuard(options: EgressGuardOptions = {}): EgressGuard {
  const allow = parseEgressAllowList(options.allow ?? []);
  const resolve = options.resolve ?? dnsLookup;
  const allowedAddress = (address: IpAddress): boolean => {
    const canonical = canonicalAddress(address);
    return allow.prefixes.some((entry) => inPrefix(canonical, entry.family, entry.prefix, entry.bits));
  };
  const refusal = (host: string, address: IpAddress): EgressRefusedError | undefined => {
    if (allowedAddress(address)) return undefined;
    const kind = internalAddressKind(address);
    return kind === undefined ? undefined : new EgressRefusedError(host, formatIpAddress(address), `a ${kind} address`);
  };

  const checkHost = (host: string): void => {
    if (host.startsWith('/')) {
      throw new EgressRefusedError(host, host, "a Unix socket on the gateway's own host");
    }
    if (allow.hosts.has(normalizeHost(host))) return;
    const literal = parseIpAddress(host);
    const refused = literal === undefined ? undefined : refusal(host, literal);
    if (refused !== undefined) throw refused;
  };

  const lookup = ((
    hostname: string,
    options: LookupOptions | number | undefined,
    callback: (error: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void,
  ) => {
    const asked: LookupOptions =
      typeof options === 'number' ? { family: options } : typeof options === 'object' ? options : {};
    try {
      checkHost(hostname);
    } catch (error) {
      process.nextTick(() => callback(error as EgressRefusedError));
      return;
    }
    const trusted = allow.hosts.has(normalizeHost(hostname));
    resolve(hostname, { ...asked, all: true }, (error, addresses) => {
      if (error !== null) return callback(error);
      if (!trusted) {
        for (const { address } of addresses) {
          const parsed = parseIpAddress(address);
          const refused =
            parsed === undefined
              ? new EgressRefusedError(hostname, address, 'not an IP address')
              : refusal(hostname, parsed);
          if (refused !== undefined) return callback(refused);
        }
      }
      if (asked.all === true) return callback(null, addresses);
      const first = addresses[0];
      if (first === undefined)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;

  return { checkHost, lookup };
}
