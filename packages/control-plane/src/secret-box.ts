import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Seals values with AES-256-GCM: source credentials at rest, and the admin
 * session cookie. Its keys come derived for one purpose (`sealedCredentialKeys`
 * or `ServerKeys.adminSession` in `@mcpgw/core`), so a value sealed for one
 * never opens for another. Each sealed value names the key that sealed it (a
 * key id), so SECRETS_KEY can be rotated: new values seal with the current
 * key, old ones still open with a previous key until they are sealed again.
 *
 * A sealed value is bound to where it belongs (tenant and source) through
 * GCM's associated data: copied onto another source, it no longer opens.
 */
export interface SecretBox {
  /** The id of the key new values are sealed with. */
  readonly keyId: string;
  seal(plaintext: string, boundTo: string): string;
  /** Throws `SealedSecretError` when the value is malformed, tampered, moved, or sealed with an unknown key. */
  open(sealed: string, boundTo: string): string;
  /** True when `sealed` was sealed with an older key and should be sealed again. */
  needsResealing(sealed: string): boolean;
}

export class SealedSecretError extends Error {
  override readonly name = 'SealedSecretError';
}

const FORMAT = 'v1';

interface IdentifiedKey {
  readonly id: string;
  readonly key: Buffer;
}

function identified(key: Uint8Array): IdentifiedKey {
  if (key.length !== 32) throw new TypeError('a secret box key is 32 bytes (AES-256-GCM)');
  // The id reveals nothing useful about the key: a truncated hash of it.
  const id = createHash('sha256').update(key).digest('base64url').slice(0, 8);
  return { id, key: Buffer.from(key) };
}

/**
 * `keys[0]` seals; every listed key opens (rotation: put the key of the new
 * SECRETS_KEY first and keep the previous one until every value is resealed).
 */
export function createSecretBox(keys: readonly Uint8Array[]): SecretBox {
  const identifiedKeys = keys.map(identified);
  const current = identifiedKeys[0];
  if (current === undefined) throw new Error('createSecretBox needs at least one key');
  const byId = new Map(identifiedKeys.map((entry) => [entry.id, entry.key]));
  return {
    keyId: current.id,
    seal(plaintext, boundTo) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(Buffer.from(boundTo, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return [FORMAT, current.id, iv.toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed, boundTo) {
      const [format, keyId, ivText, bodyText, ...rest] = sealed.split('.');
      if (
        format !== FORMAT ||
        keyId === undefined ||
        ivText === undefined ||
        bodyText === undefined ||
        rest.length > 0
      ) {
        throw new SealedSecretError('not a sealed secret of this gateway');
      }
      const key = byId.get(keyId);
      if (key === undefined) {
        throw new SealedSecretError(`sealed with key ${keyId}, which is not among the configured SECRETS_KEY values`);
      }
      const iv = Buffer.from(ivText, 'base64url');
      const body = Buffer.from(bodyText, 'base64url');
      if (iv.length !== 12 || body.length < 16) throw new SealedSecretError('not a sealed secret of this gateway');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(Buffer.from(boundTo, 'utf8'));
        decipher.setAuthTag(body.subarray(body.length - 16));
        return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
      } catch {
        throw new SealedSecretError('sealed secret does not open: tampered, or sealed for another place');
      }
    },
    needsResealing(sealed) {
      return sealed.split('.')[1] !== current.id;
    },
  };
}
