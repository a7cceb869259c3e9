/**
 * A replica that does nothing but write to the control plane, as fast as it
 * can, until it is killed: the child process of control-plane-loss.test.ts.
 * Run with Node 22 (type stripping) against the built @mcpgw/control-plane:
 *
 *   node control-plane-writer.ts postgres <url> <seed>
 *   node control-plane-writer.ts pglite <dataDir> <seed>
 *
 * Prints `ready`, then for each write `begin <n>` before it starts and
 * `done <n> wrote|refused` once it committed (or the store refused it,
 * changing nothing), so the test knows which writes were acknowledged and
 * whether the kill fell inside one.
 */
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import {
  createControlPlaneStore,
  createPgliteDatabase,
  createPostgresDatabase,
  createSecretBox,
} from '@mcpgw/control-plane';
import { sealedCredentialKeys } from '@mcpgw/core';
import type { TenantEntityKind } from '@mcpgw/control-plane';

export const WRITER_SECRETS_KEY = 'control-plane loss test: a key of at least thirty-two characters';
export const WRITER_TENANTS = ['alpha', 'beta'];
const KINDS: readonly TenantEntityKind[] = ['issuer', 'source', 'grant', 'admin-role-binding'];
const NAMES = ['one', 'two', 'three'];

/** A small deterministic generator (mulberry32), so a failing run can be replayed from its seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Straight to the pipe, unbuffered: a line printed is a line the test reads, even after SIGKILL. */
function say(line: string): void {
  writeSync(1, `${line}\n`);
}

async function main(): Promise<void> {
  const [engine, target, seedText] = process.argv.slice(2);
  if (target === undefined || (engine !== 'postgres' && engine !== 'pglite')) {
    throw new Error('usage: control-plane-writer.ts postgres|pglite <url|dataDir> <seed>');
  }
  const random = generator(Number(seedText ?? '1'));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const db =
    engine === 'postgres' ? createPostgresDatabase({ url: target }) : await createPgliteDatabase({ dataDir: target });
  const store = createControlPlaneStore({
    db,
    secrets: createSecretBox(sealedCredentialKeys([Buffer.from(WRITER_SECRETS_KEY)])),
  });
  const actor = { actor: { kind: 'operator', subject: `writer-${process.pid}` }, clientAddress: '192.0.2.1' } as const;
  say('ready');
  for (let n = 0; ; n += 1) {
    const tenant = pick(WRITER_TENANTS);
    const roll = random();
    // Documents of varying size, so that writes take varying time and a kill lands anywhere in one.
    const document = { writer: process.pid, n, padding: 'x'.repeat(Math.floor(random() * 4000)) };
    say(`begin ${n}`);
    try {
      if (roll < 0.15) {
        await store.updateTenant(actor, tenant, { document: { name: `Tenant ${tenant}`, ...document } });
      } else if (roll < 0.35) {
        await store.deleteEntity(actor, tenant, pick(KINDS), pick(NAMES));
      } else {
        const kind = pick(KINDS);
        const secrets = kind === 'source' && random() < 0.5 ? { password: `secret-${n}` } : undefined;
        await store.putEntity(actor, tenant, kind, pick(NAMES), document, secrets === undefined ? {} : { secrets });
      }
      say(`done ${n} wrote`);
    } catch (error) {
      // Refused by the store (deleting what is not there): nothing was changed.
      if ((error as Error).name !== 'StoreError') throw error;
      say(`done ${n} refused`);
    }
  }
}

// Run only as the entry point, so the test can import the constants above.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`writer: ${String((error as Error)?.stack ?? error)}\n`);
    process.exit(1);
  });
}
