import { createServerKeys, sealedCredentialKeys } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { createSecretBox, SealedSecretError } from '../src/secret-box.js';

const OLD_SECRET = 'an old server secret of at least thirty-two characters';
const NEW_SECRET = 'the new server secret of at least thirty-two characters';
const [OLD, NEW] = sealedCredentialKeys([Buffer.from(OLD_SECRET), Buffer.from(NEW_SECRET)]) as [Buffer, Buffer];

describe('secret box', () => {
  it('opens what it sealed, and the sealed text contains nothing of the plaintext', () => {
    const box = createSecretBox([NEW]);
    const sealed = box.seal('s3cr3t-access-key', 'acme/reports');
    expect(sealed).not.toContain('s3cr3t');
    expect(Buffer.from(sealed.split('.')[3] ?? '', 'base64url').toString('latin1')).not.toContain('s3cr3t');
    expect(box.open(sealed, 'acme/reports')).toBe('s3cr3t-access-key');
  });

  it('seals the same value differently each time (random nonce)', () => {
    const box = createSecretBox([NEW]);
    expect(box.seal('x', 'a/b')).not.toBe(box.seal('x', 'a/b'));
  });

  it('refuses a value moved to another tenant or source', () => {
    const box = createSecretBox([NEW]);
    const sealed = box.seal('password', 'acme/warehouse');
    expect(() => box.open(sealed, 'globex/warehouse')).toThrow(SealedSecretError);
    expect(() => box.open(sealed, 'acme/other')).toThrow(SealedSecretError);
  });

  it('keeps purposes apart: a value sealed for one never opens for another, though the server secret is the same', () => {
    const credentials = createSecretBox([NEW]);
    const sessions = createSecretBox(createServerKeys({ secretsKey: NEW_SECRET }).adminSession);
    expect(sessions.keyId).not.toBe(credentials.keyId);
    expect(() => credentials.open(sessions.seal('x', 'a/b'), 'a/b')).toThrow(SealedSecretError);
    expect(() => sessions.open(credentials.seal('x', 'a/b'), 'a/b')).toThrow(SealedSecretError);
    const rotated = createServerKeys({ secretsKey: OLD_SECRET, previousSecretsKey: NEW_SECRET });
    expect(createSecretBox(rotated.adminSession).open(sessions.seal('x', 'a/b'), 'a/b')).toBe('x');
  });

  it('takes 32-byte keys only, never a server secret as it stands', () => {
    expect(() => createSecretBox([Buffer.from(NEW_SECRET)])).toThrow(TypeError);
  });

  // Sealed before the keys were derived in @mcpgw/core, from these SECRETS_KEY values: what the
  // control plane stores and what browsers hold as session cookies still opens, under the same key ids.
  it('opens what was sealed before, with the same key ids', () => {
    const secretsKey = 'a fixed SECRETS_KEY for key vectors, 32+ characters';
    const previousSecretsKey = 'the previous SECRETS_KEY for key vectors, 32+ chars';
    const credentials = createSecretBox(
      sealedCredentialKeys([Buffer.from(secretsKey, 'utf8'), Buffer.from(previousSecretsKey, 'utf8')]),
    );
    expect(credentials.keyId).toBe('9uVx6DIC');
    expect(credentials.open('v1.9uVx6DIC.pWNiWZIw-aIZkQcH.gOrb5GnEjJYzWsczzl361qw2', 'acme/src')).toBe('pw');
    const previousSealed = 'v1.-AwwpuIP.aDQdop_9YoQHEnZI.bGxxAmXdWbxDllqQZu2mALPPvut2gA';
    expect(credentials.open(previousSealed, 'acme/src')).toBe('old pw');
    expect(credentials.needsResealing(previousSealed)).toBe(true);
    const sessions = createSecretBox(createServerKeys({ secretsKey, previousSecretsKey }).adminSession);
    expect(sessions.keyId).toBe('yaZvJAfX');
    const cookie = 'mcpgw admin session cookie';
    expect(sessions.open('v1.yaZvJAfX.UBnN4eqdlC0y-Uk7.ee0INVhY97yiJQdac2OeaarQT9WaOx8IgQ', cookie)).toBe('{"d":"x"}');
    expect(sessions.open('v1.BrOGEwjM.VNqdpdJv-UcmhWjt.rh9jrggIVQp6NO1-XAA4x_8eHHkwWkPF0g', cookie)).toBe('{"d":"y"}');
  });

  it('refuses a tampered value', () => {
    const box = createSecretBox([NEW]);
    const [format, kid, iv, body] = box.seal('password', 'a/b').split('.') as [string, string, string, string];
    const bytes = Buffer.from(body, 'base64url');
    bytes[0] = (bytes[0] ?? 0) ^ 1;
    expect(() => box.open([format, kid, iv, bytes.toString('base64url')].join('.'), 'a/b')).toThrow(
      'sealed secret does not open: tampered, or sealed for another place',
    );
    expect(() => box.open('plaintext', 'a/b')).toThrow('not a sealed secret of this gateway');
  });

  it('rotates: values sealed with the previous key still open and are flagged for resealing', () => {
    const before = createSecretBox([OLD]);
    const sealed = before.seal('password', 'a/b');
    const after = createSecretBox([NEW, OLD]);
    expect(after.open(sealed, 'a/b')).toBe('password');
    expect(after.needsResealing(sealed)).toBe(true);
    expect(after.needsResealing(after.seal('password', 'a/b'))).toBe(false);
    expect(() => createSecretBox([NEW]).open(sealed, 'a/b')).toThrow(
      `sealed with key ${before.keyId}, which is not among the configured SECRETS_KEY values`,
    );
  });
});
