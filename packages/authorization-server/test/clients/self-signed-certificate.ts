/**
 * A self-signed X.509 certificate made in the test, so document servers can
 * speak https on loopback without a certificate in the repository or a
 * command-line tool: the DER of RFC 5280 section 4.1, built by hand (node's
 * crypto signs and parses certificates but does not issue them), an ECDSA
 * P-256 key, the names as subjectAltName dNSNames. The fetch under test
 * trusts it through its `trustedCertificates` option only.
 */
import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, ...contents: Buffer[]): Buffer => {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
};
const sequence = (...contents: Buffer[]) => tlv(0x30, ...contents);
const set = (...contents: Buffer[]) => tlv(0x31, ...contents);
const explicit = (tag: number, content: Buffer) => tlv(0xa0 | tag, content);

function objectIdentifier(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups: number[] = [];
    for (let value = arc; ; value = Math.floor(value / 128)) {
      groups.unshift((value % 128) | (groups.length === 0 ? 0 : 0x80));
      if (value < 128) break;
    }
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const utcTime = (date: Date) =>
  tlv(0x17, Buffer.from(date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z', 'ascii'));

const ECDSA_WITH_SHA256 = sequence(objectIdentifier('1.2.840.10045.4.3.2'));

export interface TestCertificate {
  /** The certificate, PEM: the server's `cert` and the client's trusted certificate. */
  cert: string;
  /** The private key, PEM (PKCS 8): the server's `key`. */
  key: string;
}

/** A certificate for `names` (DNS names), valid from an hour ago for a day, its own issuer (a CA, so it may anchor trust). */
export function selfSignedCertificate(names: readonly string[]): TestCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const name = sequence(set(sequence(objectIdentifier('2.5.4.3'), tlv(0x0c, Buffer.from(names[0] ?? 'test')))));
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  const now = Date.now();
  const extensions = sequence(
    // basicConstraints, critical: cA TRUE.
    sequence(
      objectIdentifier('2.5.29.19'),
      tlv(0x01, Buffer.from([0xff])),
      tlv(0x04, sequence(tlv(0x01, Buffer.from([0xff])))),
    ),
    // subjectAltName: dNSName [2] for each name.
    sequence(objectIdentifier('2.5.29.17'), tlv(0x04, sequence(...names.map((dns) => tlv(0x82, Buffer.from(dns)))))),
  );
  const tbs = sequence(
    explicit(0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(utcTime(new Date(now - 3600_000)), utcTime(new Date(now + 24 * 3600_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, ECDSA_WITH_SHA256, tlv(0x03, Buffer.from([0]), signature));
  // Parsing it back fails the test here, not in a TLS handshake, when the encoding is wrong.
  const parsed = new X509Certificate(der);
  return { cert: parsed.toString(), key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}
