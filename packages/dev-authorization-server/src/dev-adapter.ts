import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Adapter, AdapterPayload } from 'oidc-provider';

interface Entry {
  payload: AdapterPayload;
  /** Epoch milliseconds; Infinity when oidc-provider gave no lifetime (clients, for one). */
  expiresAt: number;
}

/** Where registered clients are kept across restarts, and the adapter factory oidc-provider calls per model. */
export interface DevAdapter {
  factory: (model: string) => Adapter;
  /** Resolves once every pending client write reached the disk. */
  flush(): Promise<void>;
}

const SWEEP_EVERY = 100;

/**
 * oidc-provider's storage for a single-process development server: grants,
 * sessions, codes and refresh tokens live in memory (a restart logs the demo
 * user out, which costs nothing: consent is automatic), while dynamically
 * registered clients are written to `clientsFile`. MCP clients remember their
 * client_id, and a client_id that disappears on restart strands them on an
 * `invalid_client` error page (RFC 7591 §3.2.1 gives them no way to notice).
 * oidc-provider's own memory adapter would do for the rest, but it prints a
 * production warning on every start.
 */
export async function createDevAdapter(clientsFile: string): Promise<DevAdapter> {
  const entries = new Map<string, Entry>();
  for (const [id, payload] of Object.entries(await readClients(clientsFile))) {
    entries.set(`Client:${id}`, { payload, expiresAt: Infinity });
  }

  let writes: Promise<void> = Promise.resolve();
  const persistClients = () => {
    const clients = Object.fromEntries(
      [...entries].filter(([key]) => key.startsWith('Client:')).map(([key, entry]) => [key.slice(7), entry.payload]),
    );
    // Serialized, and each write replaces the file whole (rename), so a crash never leaves half a file.
    writes = writes.then(async () => {
      const temporary = `${clientsFile}.${randomUUID()}.tmp`;
      await writeFile(temporary, `${JSON.stringify(clients, null, 2)}\n`, { mode: 0o600 });
      await rename(temporary, clientsFile);
    });
    return writes;
  };

  let upserts = 0;
  const live = (key: string): Entry | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  const findBy = (model: string, field: 'uid' | 'userCode', value: string) => {
    for (const [key, entry] of entries) {
      if (key.startsWith(`${model}:`) && entry.payload[field] === value) return live(key)?.payload;
    }
    return undefined;
  };

  const factory = (model: string): Adapter => ({
    async upsert(id, payload, expiresIn) {
      if (++upserts % SWEEP_EVERY === 0) {
        for (const key of entries.keys()) live(key);
      }
      const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity;
      entries.set(`${model}:${id}`, { payload, expiresAt });
      if (model === 'Client') await persistClients();
    },
    async find(id) {
      return live(`${model}:${id}`)?.payload;
    },
    async findByUid(uid) {
      return findBy(model, 'uid', uid);
    },
    async findByUserCode(userCode) {
      return findBy(model, 'userCode', userCode);
    },
    async consume(id) {
      const entry = live(`${model}:${id}`);
      if (entry !== undefined) entry.payload.consumed = Math.floor(Date.now() / 1000);
    },
    async destroy(id) {
      entries.delete(`${model}:${id}`);
      if (model === 'Client') await persistClients();
    },
    async revokeByGrantId(grantId) {
      // Every token of the grant, whichever model oidc-provider asks through.
      for (const [key, entry] of entries) {
        if (entry.payload.grantId === grantId) entries.delete(key);
      }
    },
  });

  return { factory, flush: () => writes };
}

async function readClients(path: string): Promise<Record<string, AdapterPayload>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`development authorization server: ${path} is not a JSON object of clients; delete it`);
  }
  return parsed as Record<string, AdapterPayload>;
}
