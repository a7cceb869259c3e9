import { sealedCredentialKeys } from '@mcpgw/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ControlPlaneStore } from '../src/control-plane-store.js';
import type { WriteContext } from '../src/write-context.js';
import type { AuditEvent } from '../src/audit-log.js';
import { createControlPlaneStore } from '../src/control-plane-store.js';
import { createSecretBox } from '../src/secret-box.js';
import { migrate } from '../src/migrate.js';
import { ENGINES, type EngineUnderTest } from './engines.js';

// PGlite starts a WebAssembly Postgres per test; on a loaded machine that takes seconds.
vi.setConfig({ testTimeout: 60_000 });

const box = createSecretBox(sealedCredentialKeys([Buffer.from('a server secret of at least thirty-two characters')]));
const admin: WriteContext = { actor: { kind: 'tenant-admin', subject: 'alice' }, clientAddress: '192.0.2.7' };

// Past 9 → 10 and 99 → 100 is where ids stop sorting the same as text and as numbers.
const WRITES = 120;

/** Every event of the tenant, following `before` from page to page. */
async function pageThrough(store: ControlPlaneStore, limit: number): Promise<AuditEvent[]> {
  const seen: AuditEvent[] = [];
  for (;;) {
    const before = seen.at(-1)?.id;
    const page = await store.auditEvents('acme', { limit, ...(before === undefined ? {} : { before }) });
    seen.push(...page);
    if (page.length < limit) return seen;
  }
}

describe.each(Object.keys(ENGINES) as (keyof typeof ENGINES)[])('the audit log on %s', (engine) => {
  let under: EngineUnderTest | undefined;
  afterEach(async () => {
    await under?.dispose();
    under = undefined;
  });

  it('pages newest first in numeric id order: every event exactly once, whatever the page size', async () => {
    under = await ENGINES[engine]();
    await migrate(under.db);
    const store = createControlPlaneStore({ db: under.db, secrets: box });
    await store.createTenant(admin, 'acme', {});
    for (let i = 1; i < WRITES; i += 1) await store.putEntity(admin, 'acme', 'grant', `g${i}`, { n: i });

    const [newest] = await store.auditEvents('acme', { limit: 1 });
    expect(newest).toMatchObject({ targetId: `g${WRITES - 1}`, action: 'create' });

    // The order a client sees: the tenant's creation last, then each grant, the newest first.
    const expected = ['acme', ...Array.from({ length: WRITES - 1 }, (_, i) => `g${i + 1}`)].reverse();
    for (const limit of [1, 3, 7, 10, 50]) {
      const events = await pageThrough(store, limit);
      expect(
        events.map((event) => event.targetId),
        `limit ${limit}`,
      ).toEqual(expected);
      const ids = events.map((event) => BigInt(event.id));
      expect(ids.every((id, i) => i === 0 || id < (ids[i - 1] as bigint))).toBe(true);
    }
  });
});
