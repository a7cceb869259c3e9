import type { LookupAddress } from 'node:dns';
import { createServer, connect, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  createEgressGuard,
  egressAllowEntryProblem,
  EgressRefusedError,
  findEgressRefusal,
  type EgressGuard,
} from '../src/egress-guard.js';
import { formatIpAddress, parseIpAddress } from '../src/ip-address.js';
import { internalAddressKind } from '../src/internal-addresses.js';

const kindOf = (text: string) => {
  const address = parseIpAddress(text);
  if (address === undefined) throw new Error(`not an address: ${text}`);
  return internalAddressKind(address);
};

/** A resolver that answers fixed addresses per name (no DNS involved). */
function fixedResolver(answers: Record<string, string[]>) {
  return ((hostname: string, _options: unknown, callback: (...args: unknown[]) => void) => {
    const list = answers[hostname];
    if (list === undefined) {
      process.nextTick(() =>
        callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })),
      );
      return;
    }
    const addresses: LookupAddress[] = list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    process.nextTick(() => callback(null, addresses));
  }) as never;
}

function lookupOnce(guard: EgressGuard, host: string, all = false): Promise<string | LookupAddress[]> {
  return new Promise((resolve, reject) =>
    guard.lookup(host, { all }, (error, address) => (error ? reject(error) : resolve(address))),
  );
}

describe('parseIpAddress: every notation a resolver or URL parser accepts', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0177.0.0.01', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['127.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'],
    ['2852039166', '169.254.169.254'],
    ['::1', '::1'],
    ['[::1]', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['[::ffff:7f00:1]', '::ffff:7f00:1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['FD00:EC2::254', 'fd00:ec2::254'],
  ])('%s is %s', (text, expected) => {
    const address = parseIpAddress(text);
    expect(address).toBeDefined();
    expect(formatIpAddress(address!)).toBe(expected);
  });

  it.each([
    'localhost',
    'example.com',
    '1.2.3.4.example.com',
    '256.1.1.1',
    '1.2.3.4.5',
    '0x',
    ':::1',
    '1::2::3',
    '08.1.1.1',
    '',
  ])('%s is a name (or nothing), not an address', (text) => {
    // '0x' alone is 0 to the URL parser; everything else here is not an address at all.
    if (text === '0x') return expect(formatIpAddress(parseIpAddress(text)!)).toBe('0.0.0.0');
    expect(parseIpAddress(text)).toBeUndefined();
  });
});

describe('internalAddressKind: every refused range', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.0.1', 'link-local'],
    ['169.254.255.255', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.170.2', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fdff:ffff::1', 'private'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.255', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.255', 'multicast'],
    ['ff02::1', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    // IPv6 forms that reach an IPv4 host are judged by that host.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
  ])('%s is %s', (text, kind) => {
    expect(kindOf(text)).toBe(kind);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::',
  ])('%s is public', (text) => {
    expect(kindOf(text)).toBeUndefined();
  });
});

describe('EgressGuard.checkHost: literals refused before any lookup', () => {
  const guard = createEgressGuard({ resolve: fixedResolver({}) });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f.1', 'loopback'],
    ['0177.0.0.1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['[::ffff:a9fe:a9fe]', 'cloud metadata'],
    ['169.254.169.254', 'cloud metadata'],
    ['0xa9fea9fe', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['10.0.0.5', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
  ])('%s is refused as %s', (host, kind) => {
    let caught: unknown;
    try {
      guard.checkHost(host);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EgressRefusedError);
    const refusal = caught as EgressRefusedError;
    expect(refusal.code).toBe('EGRESS_REFUSED');
    expect(refusal.message).toContain(`a ${kind} address`);
    expect(refusal.message).toContain(host);
    expect(refusal.message).toContain('EGRESS_ALLOW');
  });

  it('refuses a Unix socket path', () => {
    expect(() => guard.checkHost('/var/run/postgresql/.s.PGSQL.5432')).toThrow(
      /Unix socket on the gateway's own host; only operators may configure one/,
    );
  });

  it('lets public literals and names through (names are judged by their addresses)', () => {
    expect(() => guard.checkHost('8.8.8.8')).not.toThrow();
    expect(() => guard.checkHost('[2606:4700::1111]')).not.toThrow();
    expect(() => guard.checkHost('localhost')).not.toThrow();
  });
});

describe('EgressGuard.lookup: the resolved addresses decide', () => {
  const resolve = fixedResolver({
    'public.example': ['93.184.215.14'],
    localhost: ['127.0.0.1', '::1'],
    'rebound.example': ['93.184.215.14', '169.254.169.254'],
    'mapped.example': ['::ffff:10.0.0.1'],
    'minio.internal': ['10.1.2.3'],
  });

  it('answers a public name with its address, in the shape asked for', async () => {
    const guard = createEgressGuard({ resolve });
    expect(await lookupOnce(guard, 'public.example')).toBe('93.184.215.14');
    expect(await lookupOnce(guard, 'public.example', true)).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  it.each([
    ['localhost', '127.0.0.1', 'loopback'],
    ['rebound.example', '169.254.169.254', 'cloud metadata'],
    ['mapped.example', '10.0.0.1', 'private'],
  ])('refuses %s, which resolves to %s', async (host, address, kind) => {
    const guard = createEgressGuard({ resolve });
    const error = await lookupOnce(guard, host).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EgressRefusedError);
    expect((error as Error).message).toContain(`${host} (`);
    expect((error as Error).message).toContain(address.includes(':') ? address : `a ${kind} address`);
  });

  it('refuses a literal before resolving it', async () => {
    const guard = createEgressGuard({ resolve: fixedResolver({}) });
    await expect(lookupOnce(guard, '0x7f000001')).rejects.toBeInstanceOf(EgressRefusedError);
  });

  it('passes resolver failures through unchanged', async () => {
    const guard = createEgressGuard({ resolve });
    await expect(lookupOnce(guard, 'nowhere.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('the operator allowlist', () => {
  const resolve = fixedResolver({ 'minio.internal': ['10.1.2.3'], localhost: ['127.0.0.1'], other: ['10.9.9.9'] });

  it('lets a listed CIDR through, in every notation of its addresses', async () => {
    const guard = createEgressGuard({ allow: ['10.0.0.0/8', '127.0.0.1'], resolve });
    expect(() => guard.checkHost('10.2.3.4')).not.toThrow();
    expect(() => guard.checkHost('0x0a020304')).not.toThrow();
    expect(() => guard.checkHost('::ffff:10.2.3.4')).not.toThrow();
    expect(() => guard.checkHost('127.0.0.1')).not.toThrow();
    expect(() => guard.checkHost('127.0.0.2')).toThrow(EgressRefusedError);
    expect(() => guard.checkHost('192.168.0.1')).toThrow(EgressRefusedError);
    expect(await lookupOnce(guard, 'other')).toBe('10.9.9.9');
    expect(await lookupOnce(guard, 'localhost')).toBe('127.0.0.1');
  });

  it('lets a listed host name through whatever it resolves to, and only that name', async () => {
    const guard = createEgressGuard({ allow: ['MINIO.internal'], resolve });
    expect(await lookupOnce(guard, 'minio.internal')).toBe('10.1.2.3');
    expect(() => guard.checkHost('minio.internal.')).not.toThrow();
    await expect(lookupOnce(guard, 'other')).rejects.toBeInstanceOf(EgressRefusedError);
    expect(() => guard.checkHost('10.1.2.3')).toThrow(EgressRefusedError);
  });

  it('an IPv6 CIDR covers its own range only', () => {
    const guard = createEgressGuard({ allow: ['fd00::/8'] });
    expect(() => guard.checkHost('fd12::1')).not.toThrow();
    expect(() => guard.checkHost('fc00::1')).toThrow(EgressRefusedError);
  });

  it.each([
    ['10.0.0.0/8', undefined],
    ['::1', undefined],
    ['fd00::/8', undefined],
    ['minio.internal', undefined],
    ['compose_service', undefined],
    ['10.0.0.0/33', 'is not a CIDR'],
    ['fd00::/129', 'is not a CIDR'],
    ['minio/8', 'is not a CIDR'],
    ['http://minio', 'is not a CIDR, an address or a host name'],
    ['a b', 'is not a CIDR, an address or a host name'],
  ])('entry %s: %s', (entry, problem) => {
    const found = egressAllowEntryProblem(entry);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it('a bad entry fails the guard at creation, naming it', () => {
    expect(() => createEgressGuard({ allow: ['10.0.0.0/40'] })).toThrow(/EGRESS_ALLOW: "10.0.0.0\/40"/);
  });
});

describe('at connect time, on a real socket', () => {
  async function listening(): Promise<{ server: Server; port: number; accepted: () => number }> {
    let accepted = 0;
    const server = createServer((socket) => {
      accepted++;
      socket.end('secret from the host');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, port: (server.address() as { port: number }).port, accepted: () => accepted };
  }

  function attempt(port: number, host: string, guard: EgressGuard): Promise<{ error?: unknown; data: string }> {
    return new Promise((resolve) => {
      let data = '';
      try {
        guard.checkHost(host);
      } catch (error) {
        return resolve({ error, data });
      }
      const socket = connect({ port, host, lookup: guard.lookup });
      socket.on('data', (chunk) => (data += chunk));
      socket.on('error', (error) => resolve({ error, data }));
      socket.on('end', () => resolve({ data }));
    });
  }

  it('a name resolving to loopback never connects; the allowlist lets it', async () => {
    const { server, port, accepted } = await listening();
    try {
      const refused = await attempt(
        port,
        'localhost',
        createEgressGuard({ resolve: fixedResolver({ localhost: ['127.0.0.1'] }) }),
      );
      expect(findEgressRefusal(refused.error)).toBeInstanceOf(EgressRefusedError);
      expect(refused.data).toBe('');
      const literal = await attempt(port, '127.0.0.1', createEgressGuard());
      expect(findEgressRefusal(literal.error)).toBeInstanceOf(EgressRefusedError);
      expect(accepted()).toBe(0);
      const allowed = await attempt(port, '127.0.0.1', createEgressGuard({ allow: ['127.0.0.0/8'] }));
      expect(allowed.data).toBe('secret from the host');
      expect(accepted()).toBe(1);
    } finally {
      server.close();
    }
  });

  it('findEgressRefusal follows causes and aggregate errors', () => {
    const refusal = new EgressRefusedError('h', '127.0.0.1', 'a loopback address');
    expect(findEgressRefusal(new Error('outer', { cause: new AggregateError([new Error('x'), refusal]) }))).toBe(
      refusal,
    );
    expect(findEgressRefusal(new Error('plain'))).toBeUndefined();
  });
});
