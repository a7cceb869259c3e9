import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createServerKeys, sealedCredentialKeys } from '../src/server-keys.js';

// The bytes below were computed by the derivations as they stood before the
// keys moved into this module (cursor codec, cache keys, secret box, session
// sealer, principal fingerprints, admin rate counters). What those keys protect
// is held outside the process: sealed credentials in the control plane,
// cursors and session cookies by clients, cache keys and counters in Redis
// across a rolling upgrade. A change here breaks every one of them.
const SECRETS_KEY = 'a fixed SECRETS_KEY for key vectors, 32+ characters';
const PREVIOUS = 'the previous SECRETS_KEY for key vectors, 32+ chars';

const hex = (key: Buffer) => key.toString('hex');

describe('server keys', () => {
  const keys = createServerKeys({ secretsKey: SECRETS_KEY, previousSecretsKey: PREVIOUS });

  it('derives the same bytes for every purpose as before', () => {
    expect(hex(keys.cursor)).toBe('c4588d10bd2983e0b71f9466caeeeb350659262732d80954ef4c02974a0c444a');
    expect(hex(keys.cacheKey)).toBe('2220ed5187b5091a1d32a8ce096a33272d30ae842aa4b7e8ac2d89c66f060916');
    expect(hex(keys.adminSession[0]!)).toBe('16a6f67f65f144e5adbfbb10d52fe63110d02d1e777f36561277912f89c64264');
    expect(hex(keys.tenantPrincipalFingerprint('acme'))).toBe(
      'e5261075b72f37edcd7ebdec4959a4439139b5db2ea450da4c9d517c5bfbb27d',
    );
    expect(hex(keys.requestLogFingerprint)).toBe('c3ea2350993f807f81d3ad7d23e6b8174022ee2e9f065ed2acecc3458ceec222');
    expect(keys.adminPrincipalCounter.toString('utf8')).toBe(SECRETS_KEY);
    expect(hex(sealedCredentialKeys([Buffer.from(SECRETS_KEY, 'utf8')])[0]!)).toBe(
      'da39c211db5da6e4904a6b87b8c9a8060fa84148504cdbb72a6683c4d37e5634',
    );
    expect(keys.ephemeral).toBe(false);
  });

  it('gives each tenant its own authorization server CSRF key, apart from its cookie keys', () => {
    // A released label: forms served before an upgrade must still be accepted after it.
    expect(hex(keys.authorizationServerCsrf('acme'))).toBe(
      'efdfa69050744e0bc27179bf41ab08a32a759e1f8921d708b027e9242b405ac5',
    );
    expect(hex(keys.authorizationServerCsrf('beta'))).not.toBe(hex(keys.authorizationServerCsrf('acme')));
    expect(keys.authorizationServerCookies('acme').map(hex)).not.toContain(hex(keys.authorizationServerCsrf('acme')));
    expect(hex(createServerKeys({ secretsKey: SECRETS_KEY }).authorizationServerCsrf('acme'))).toBe(
      hex(keys.authorizationServerCsrf('acme')),
    );
  });

  it('gives fingerprints as before', () => {
    // The request log's and a tenant's fingerprint of one caller, as logged and shown before.
    const fingerprint = (key: Buffer) =>
      createHmac('sha256', key).update('https://idp.example\nalice').digest('base64url').slice(0, 12);
    expect(fingerprint(keys.requestLogFingerprint)).toBe('4GV09cPin5UU');
    expect(fingerprint(keys.tenantPrincipalFingerprint('acme'))).toBe('_HVLfWOOvean');
  });

  it('keys each purpose apart', () => {
    const all = [
      keys.cursor,
      keys.cacheKey,
      keys.adminSession[0]!,
      keys.requestLogFingerprint,
      keys.tenantPrincipalFingerprint('acme'),
      keys.tenantPrincipalFingerprint('globex'),
      keys.adminPrincipalCounter,
      ...sealedCredentialKeys([Buffer.from(SECRETS_KEY, 'utf8')]),
    ].map(hex);
    expect(new Set(all).size).toBe(all.length);
  });

  it('opens sessions with the previous key during a rotation, and seals with the current one', () => {
    const previous = createServerKeys({ secretsKey: PREVIOUS });
    expect(keys.adminSession.map(hex)).toEqual([hex(keys.adminSession[0]!), hex(previous.adminSession[0]!)]);
    expect(createServerKeys({ secretsKey: SECRETS_KEY }).adminSession).toHaveLength(1);
  });

  it('without SECRETS_KEY, uses a secret of its own per process, ignoring a previous key', () => {
    const one = createServerKeys({});
    const other = createServerKeys({ previousSecretsKey: PREVIOUS });
    expect(one.ephemeral).toBe(true);
    expect(hex(one.cursor)).not.toBe(hex(other.cursor));
    expect(other.adminSession).toHaveLength(1);
    expect(one.cursor).toHaveLength(32);
  });

  it('derives one sealed-credential key per root secret, in order', () => {
    const roots = [Buffer.from(SECRETS_KEY, 'utf8'), Buffer.from(PREVIOUS, 'utf8')];
    const [current, previous] = sealedCredentialKeys(roots).map(hex);
    expect(current).not.toBe(previous);
    expect(sealedCredentialKeys([roots[1]!]).map(hex)).toEqual([previous]);
  });
});
