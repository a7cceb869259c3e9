import { parseIpAddress, type IpAddress } from './ip-address.js';

/** Why an address is not a public destination (the refusal message names it). */
export type InternalAddressKind =
  | 'loopback'
  | 'link-local'
  | 'cloud metadata'
  | 'private'
  | 'shared (CGNAT)'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

interface Range {
  readonly family: 4 | 6;
  readonly prefix: Uint8Array;
  readonly bits: number;
  readonly kind: InternalAddressKind;
}

function range(cidr: string, kind: InternalAddressKind): Range {
  const [text, bits] = cidr.split('/') as [string, string];
  const address = parseIpAddress(text)!;
  return { family: address.family, prefix: address.bytes, bits: Number(bits), kind };
}

/**
 * Addresses a tenant's configuration may not reach: the host itself, the
 * networks it sits in and the services only it should see. Cloud metadata
 * endpoints come first so a refusal names them (AWS, GCP, Azure and OCI at
 * 169.254.169.254, AWS ECS task metadata at 169.254.170.2, Alibaba at
 * 100.100.100.200, AWS IMDS over IPv6 at fd00:ec2::254). Sources: the IANA
 * special-purpose registries (RFC 6890), RFC 1918, RFC 6598, RFC 4193,
 * RFC 4291 section 2.5 and 2.7.
 */
const RANGES: readonly Range[] = [
  range('169.254.169.254/32', 'cloud metadata'),
  range('169.254.170.2/32', 'cloud metadata'),
  range('100.100.100.200/32', 'cloud metadata'),
  range('fd00:ec2::254/128', 'cloud metadata'),
  range('0.0.0.0/8', 'unspecified'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'shared (CGNAT)'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'reserved'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('64:ff9b:1::/48', 'private'),
  range('2001::/32', 'reserved'),
  range('fc00::/7', 'private'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'private'),
  range('ff00::/8', 'multicast'),
];

/** Whether `address` lies in `prefix/bits` (same family). */
export function inPrefix(address: IpAddress, family: 4 | 6, prefix: Uint8Array, bits: number): boolean {
  if (address.family !== family) return false;
  for (let bit = 0; bit < bits; bit += 8) {
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    const index = bit / 8;
    if ((address.bytes[index]! & mask) !== (prefix[index]! & mask)) return false;
  }
  return true;
}

const zeros = (bytes: Uint8Array, from: number, to: number): boolean => bytes.subarray(from, to).every((b) => b === 0);

/**
 * The IPv4 address an IPv6 one carries to an IPv4 host, if any: IPv4-mapped
 * `::ffff:a.b.c.d` (RFC 4291 section 2.5.5.2; the kernel connects these over
 * IPv4), IPv4-compatible `::a.b.c.d` (section 2.5.5.1, deprecated), NAT64
 * `64:ff9b::a.b.c.d` (RFC 6052) and 6to4 `2002:aabb:ccdd::` (RFC 3056).
 * Such an address is judged by the IPv4 one it reaches.
 */
export function embeddedIPv4(address: IpAddress): IpAddress | undefined {
  if (address.family !== 6) return undefined;
  const b = address.bytes;
  const v4 = (from: number): IpAddress => ({ family: 4, bytes: b.slice(from, from + 4) });
  if (zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  // `::` and `::1` are IPv6's own unspecified and loopback addresses.
  if (zeros(b, 0, 12) && !(zeros(b, 12, 15) && b[15]! <= 1)) return v4(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(b, 4, 12)) return v4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return undefined;
}

/** An IPv4-mapped address as its IPv4 address; any other address as it is. */
export function canonicalAddress(address: IpAddress): IpAddress {
  const b = address.bytes;
  return address.family === 6 && zeros(b, 0, 10) && b[10] === 0xff && b[11] === 0xff
    ? { family: 4, bytes: b.slice(12) }
    : address;
}

/**
 * Why `address` is internal (loopback, link-local, cloud metadata, private,
 * CGNAT, unspecified, multicast, reserved), judging an IPv6 address that
 * carries an IPv4 one by that IPv4 address; undefined for a public address.
 */
export function internalAddressKind(address: IpAddress): InternalAddressKind | undefined {
  const carried = embeddedIPv4(address);
  if (carried !== undefined) return internalAddressKind(carried);
  return RANGES.find((entry) => inPrefix(address, entry.family, entry.prefix, entry.bits))?.kind;
}
