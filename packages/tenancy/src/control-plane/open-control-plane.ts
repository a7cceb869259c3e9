import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ControlPlaneStore, SqlDatabase } from '@mcpgw/control-plane';
import {
  createControlPlaneStore,
  createPgliteDatabase,
  createPostgresDatabase,
  createSecretBox,
  migrate,
} from '@mcpgw/control-plane';
import type { EnvConfig } from '@mcpgw/config';
import type { Logger } from '@mcpgw/core';
import { sealedCredentialKeys } from '@mcpgw/core';
import { databaseFailure } from '../startup-failure.js';

export interface ControlPlane {
  readonly db: SqlDatabase;
  readonly store: ControlPlaneStore;
  close(): Promise<void>;
}

/**
 * Without SECRETS_KEY, sealed credentials need a key that survives restarts
 * all the same: one is made once and kept beside the embedded database
 * (development; production sets SECRETS_KEY on every replica).
 */
async function localSealingKey(dataDir: string): Promise<Buffer> {
  const path = join(dataDir, 'control-plane.key');
  try {
    return Buffer.from((await readFile(path, 'utf8')).trim(), 'base64url');
  } catch {
    const key = randomBytes(32);
    await mkdir(dataDir, { recursive: true });
    await writeFile(path, key.toString('base64url'), { mode: 0o600, flag: 'wx' }).catch(async () => undefined);
    return Buffer.from((await readFile(path, 'utf8')).trim(), 'base64url');
  }
}

/**
 * The root secrets sealed credentials' keys are derived from
 * (`sealedCredentialKeys`), the first sealing new ones: SECRETS_KEY (then
 * SECRETS_KEY_PREVIOUS during a rotation), or without it the key kept beside
 * the embedded database.
 */
export async function sealingKeys(env: EnvConfig): Promise<Buffer[]> {
  return env.SECRETS_KEY === undefined
    ? [await localSealingKey(env.DATA_DIR)]
    : [env.SECRETS_KEY, env.SECRETS_KEY_PREVIOUS]
        .filter((key): key is string => key !== undefined)
        .map((key) => Buffer.from(key, 'utf8'));
}

/** The store's database alone, migrated (for the control-plane command): Postgres at DATABASE_URL, else PGlite under DATA_DIR. */
export async function openControlPlaneDatabase(env: EnvConfig): Promise<{ db: SqlDatabase; version: number }> {
  const db =
    env.DATABASE_URL === undefined
      ? await createPgliteDatabase({ dataDir: resolve(env.DATA_DIR, 'control-plane') })
      : createPostgresDatabase({ url: env.DATABASE_URL });
  try {
    return { db, version: (await migrate(db)).version };
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
}

/** The key an embedded store without SECRETS_KEY sealed with, read from a `control-plane.key` file. */
export async function readLocalSealingKey(path: string): Promise<Buffer> {
  return Buffer.from((await readFile(path, 'utf8')).trim(), 'base64url');
}

/**
 * Opens the control-plane store: Postgres at DATABASE_URL, else embedded
 * PGlite under DATA_DIR (so `npm start` needs no database server and keeps
 * what was written). Migrates before anything reads it.
 */
export async function openControlPlane(env: EnvConfig, logger: Logger): Promise<ControlPlane> {
  const db =
    env.DATABASE_URL === undefined
      ? await createPgliteDatabase({ dataDir: resolve(env.DATA_DIR, 'control-plane') })
      : createPostgresDatabase({ url: env.DATABASE_URL });
  try {
    const report = await migrate(db);
    logger.info({ engine: db.engine, schemaVersion: report.version, applied: report.applied }, 'control plane ready');
    const store = createControlPlaneStore({
      db,
      secrets: createSecretBox(sealedCredentialKeys(await sealingKeys(env))),
    });
    return { db, store, close: () => db.close() };
  } catch (error) {
    await db.close().catch(() => undefined);
    // Unreachable, refused or unknown to Postgres: one line naming DATABASE_URL, not a driver's stack.
    throw (env.DATABASE_URL === undefined ? undefined : databaseFailure(error, env.DATABASE_URL)) ?? error;
  }
}
