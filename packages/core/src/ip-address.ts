/** An IP address as its bytes: 4 for IPv4, 16 for IPv6. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

/**
 * The address a host string denotes when it is an address literal, in any
 * notation a resolver or URL parser accepts: dotted IPv4 with one to four
 * parts, each decimal, octal (`0177`) or hexadecimal (`0x7f`), as inet_aton(3)
 * and the WHATWG URL "IPv4 parser" read them (so `2130706433`, `0x7f.1` and
 * `0177.0.0.1` are all 127.0.0.1); IPv6 in RFC 4291 section 2.2 text form,
 * with or without brackets, a zone (`%eth0`) or a dotted IPv4 tail.
 * Undefined for anything else: a host name.
 */
export function parseIpAddress(host: string): IpAddress | undefined {
  let text = host;
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (text.includes(':')) {
    const bytes = parseIPv6(text);
    return bytes === undefined ? undefined : { family: 6, bytes };
  }
  const bytes = parseLooseIPv4(text);
  return bytes === undefined ? undefined : { family: 4, bytes };
}

/** Text form of an address: dotted IPv4, or IPv6 as eight hexadecimal groups with the longest zero run as `::`. */
export function formatIpAddress(address: IpAddress): string {
  const b = address.bytes;
  if (address.family === 4) return Array.from(b).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16));
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(':');
  const head = groups.slice(0, best.start).join(':');
  const tail = groups.slice(best.start + best.length).join(':');
  return `${head}::${tail}`;
}

function parseNumber(part: string): number | undefined {
  if (/^0x[0-9a-f]*$/i.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16);
  if (/^0[0-7]+$/.test(part)) return parseInt(part.slice(1), 8);
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number(part);
  return undefined;
}

/** inet_aton(3) rules: `a`, `a.b`, `a.b.c`, `a.b.c.d`; the last part fills the remaining bytes. */
function parseLooseIPv4(text: string): Uint8Array | undefined {
  // The WHATWG URL parser allows one trailing dot ("127.0.0.1.").
  const parts = (text.endsWith('.') ? text.slice(0, -1) : text).split('.');
  if (parts.length < 1 || parts.length > 4) return undefined;
  const numbers = parts.map(parseNumber);
  if (numbers.some((value) => value === undefined || !Number.isSafeInteger(value))) return undefined;
  const values = numbers as number[];
  const last = values.pop()!;
  if (values.some((value) => value > 255)) return undefined;
  if (last >= 256 ** (4 - values.length)) return undefined;
  const bytes = new Uint8Array(4);
  values.forEach((value, index) => (bytes[index] = value));
  for (let index = 3, rest = last; index >= values.length; index--, rest = Math.floor(rest / 256)) {
    bytes[index] = rest % 256;
  }
  return bytes;
}

function parseStrictIPv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((part) => !/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255)) {
    return undefined;
  }
  return Uint8Array.from(parts.map(Number));
}

function parseIPv6(input: string): Uint8Array | undefined {
  const text = input.replace(/%[^%]*$/, '');
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (const [index, piece] of pieces.entries()) {
      if (index === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseStrictIPv4(piece);
        if (v4 === undefined) return undefined;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        out.push(parseInt(piece, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  // A dotted tail is only allowed at the very end.
  if (halves.length === 2 && halves[0]!.includes('.')) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, index) => {
    bytes[2 * index] = group >> 8;
    bytes[2 * index + 1] = group & 0xff;
  });
  return bytes;
}
