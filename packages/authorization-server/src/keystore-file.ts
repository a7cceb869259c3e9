import { randomUUID } from 'node:crypto';
import { link, mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { JWK } from 'jose';
import { readTextIfExists } from './read-text-if-exists.js';

/** The signing algorithm of every token a hosted server issues (ID tokens and JWT access tokens). */
export const SIGNING_ALGORITHM = 'RS256';

/** The signing keys: the private set for oidc-provider and jose, the public set for verifiers. */
export interface Keystore {
  privateJwks: { keys: JWK[] };
  publicJwks: { keys: JWK[] };
}

// RFC 7518 §6.3.2: the RSA private members, never part of a published key.
const PRIVATE_RSA_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth']);

/**
 * The keystore-file key source, kept for the loopback demo login until the
 * control plane's per-tenant key store replaces it: reads the private JWKS at
 * `path`, creating it (mode 0600, in a folder of
 * mode 0700) on first use. Persisting the key is what lets tokens outlive a
 * restart and lets the token CLI sign while the gateway is down. Concurrent
 * first uses agree on one key: the file appears atomically (hard link of a
 * fully written temporary file), and whoever loses the race reads the winner's.
 */
export async function loadOrCreateKeystore(path: string): Promise<Keystore> {
  const existing = await readKeystore(path);
  if (existing !== undefined) return existing;

  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true, modulusLength: 2048 });
  const jwk = await exportJWK(privateKey);
  const key: JWK = { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: SIGNING_ALGORITHM, use: 'sig' };
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ keys: [key] }, null, 2)}\n`, { mode: 0o600 });
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary);
  }
  const created = await readKeystore(path);
  if (created === undefined) throw new Error(`authorization server: keystore ${path} vanished`);
  return created;
}

async function readKeystore(path: string): Promise<Keystore | undefined> {
  const text = await readTextIfExists(path);
  if (text === undefined) return undefined;
  const keys = parseKeys(text);
  if (keys === undefined) {
    throw new Error(
      `authorization server: ${path} is not a private ${SIGNING_ALGORITHM} JWKS; delete it to have a new key generated`,
    );
  }
  return { privateJwks: { keys }, publicJwks: publicKeysOf({ keys }) };
}

/** The published half of a private JWKS: every private member (RFC 7518 section 6.3.2) removed. */
export function publicKeysOf(privateJwks: { readonly keys: readonly JWK[] }): { keys: JWK[] } {
  return {
    keys: privateJwks.keys.map(
      (key) => Object.fromEntries(Object.entries(key).filter(([name]) => !PRIVATE_RSA_MEMBERS.has(name))) as JWK,
    ),
  };
}

function parseKeys(text: string): JWK[] | undefined {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return undefined;
  }
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) return undefined;
  const valid = keys.every(
    (key: unknown) =>
      typeof key === 'object' &&
      key !== null &&
      (key as JWK).kty === 'RSA' &&
      (key as JWK).alg === SIGNING_ALGORITHM &&
      typeof (key as JWK).kid === 'string' &&
      typeof (key as JWK).d === 'string',
  );
  return valid ? (keys as JWK[]) : undefined;
}
