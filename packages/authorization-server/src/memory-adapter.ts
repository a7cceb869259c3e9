import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '@mcpgw/core';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { readTextIfExists } from './read-text-if-exists.js';

interface Entry {
  payload: AdapterPayload;
  /** Epoch milliseconds; Infinity when oidc-provider gave no lifetime. */
  expiresAt: number;
}

/** Where registered clients are kept across restarts, and the adapter factory oidc-provider calls per model. */
export interface MemoryAdapter {
  factory: (model: string) => Adapter;
  /** Resolves once every pending client write reached the disk. */
  flush(): Promise<void>;
}

export interface MemoryAdapterOptions {
  /**
   * The clients' log (JSON Lines, mode 0600): one line per registration or
   * removal, appended; rewritten whole only when it holds about twice the
   * live clients, so a registration writes one line, not the whole set.
   */
  clientsLog: string;
  /** The most registered clients kept: registering one more forgets the oldest. */
  maxClients: number;
  logger: Logger;
}

/** One line of the clients' log. */
type LogLine = { add: string; client: AdapterPayload } | { remove: string };

const SWEEP_EVERY = 100;

/**
 * oidc-provider's storage for one tenant in a single process, until the
 * control-plane and Redis adapters take over (the `adapter` option of
 * createTenantAuthorizationServer): grants, sessions, codes and refresh
 * tokens live in memory (a restart signs everyone out), while dynamically
 * registered clients are persisted. MCP clients remember their client_id, and
 * a client_id that disappears on restart strands them on an `invalid_client`
 * error page (RFC 7591 §3.2.1 gives them no way to notice).
 *
 * Registration is open (RFC 7591 §3 allows that), so what one caller can make
 * the server keep is bounded: at most `maxClients` clients, the oldest
 * forgotten first (a client that comes back registers again), and one
 * appended line per registration.
 */
export async function createMemoryAdapter(options: MemoryAdapterOptions): Promise<MemoryAdapter> {
  const { clientsLog, maxClients, logger } = options;
  await mkdir(dirname(clientsLog), { recursive: true, mode: 0o700 });
  if (!Number.isSafeInteger(maxClients) || maxClients < 1) throw new TypeError('maxClients must be a positive integer');
  const entries = new Map<string, Entry>();
  // Registration order, oldest first: the eviction order.
  const clients = new Map<string, AdapterPayload>();
  let lines = 0;

  const replayed = await readClientsLog(clientsLog);
  if (replayed !== undefined) {
    for (const line of replayed.lines) {
      if ('add' in line) {
        clients.delete(line.add);
        clients.set(line.add, line.client);
      } else {
        clients.delete(line.remove);
      }
    }
    lines = replayed.lines.length;
  }
  while (clients.size > maxClients) clients.delete(clients.keys().next().value as string);

  let writes: Promise<void> = Promise.resolve();
  const enqueue = (write: () => Promise<void>): Promise<void> => {
    // A failed write fails its own registration, not every later one.
    writes = writes.catch(() => undefined).then(write);
    return writes;
  };
  /** Replaces the log with one line per live client (temporary file + rename: never half a file). */
  const compact = () =>
    enqueue(async () => {
      const text = [...clients].map(([id, client]) => serialize({ add: id, client })).join('');
      const temporary = `${clientsLog}.${randomUUID()}.tmp`;
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, clientsLog);
      lines = clients.size;
    });
  const append = (...added: LogLine[]) => {
    lines += added.length;
    // Amortized: one rewrite per `maxClients` appended lines at most.
    if (lines > 2 * maxClients) return compact();
    const text = added.map(serialize).join('');
    return enqueue(() => appendFile(clientsLog, text, { mode: 0o600 }));
  };

  // A torn tail is rewritten away before anything is appended after it.
  if (replayed !== undefined && (replayed.torn || lines > clients.size)) await compact();

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

  const clientAdapter: Adapter = {
    async upsert(id, payload) {
      clients.delete(id);
      clients.set(id, payload);
      const added: LogLine[] = [{ add: id, client: payload }];
      while (clients.size > maxClients) {
        const oldest = clients.keys().next().value as string;
        clients.delete(oldest);
        added.push({ remove: oldest });
        logger.info(
          { clientId: oldest, maxClients },
          'authorization server: forgot the oldest registered client (registrations are capped)',
        );
      }
      await append(...added);
    },
    async find(id) {
      return clients.get(id);
    },
    async findByUid() {
      return undefined;
    },
    async findByUserCode() {
      return undefined;
    },
    async consume() {},
    async destroy(id) {
      if (clients.delete(id)) await append({ remove: id });
    },
    async revokeByGrantId() {},
  };

  const factory = (model: string): Adapter =>
    model === 'Client'
      ? clientAdapter
      : {
          async upsert(id, payload, expiresIn) {
            if (++upserts % SWEEP_EVERY === 0) {
              for (const key of entries.keys()) live(key);
            }
            const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : Infinity;
            entries.set(`${model}:${id}`, { payload, expiresAt });
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
          },
          async revokeByGrantId(grantId) {
            // Every token of the grant, whichever model oidc-provider asks through.
            for (const [key, entry] of entries) {
              if (entry.payload.grantId === grantId) entries.delete(key);
            }
          },
        };

  return { factory, flush: () => writes.catch(() => undefined) };
}

function serialize(line: LogLine): string {
  return `${JSON.stringify(line)}\n`;
}

/** The log's lines, or undefined when there is no log yet. A torn last line (a crash mid-append) is dropped. */
async function readClientsLog(path: string): Promise<{ lines: LogLine[]; torn: boolean } | undefined> {
  const text = await readTextIfExists(path);
  if (text === undefined) return undefined;
  // Every complete line ends with a newline: what follows the last one is empty, or torn.
  const lines = text
    .split('\n')
    .slice(0, -1)
    .map((line, index) => {
      const parsed = parseLine(line);
      if (parsed === undefined) {
        throw new Error(
          `authorization server: line ${index + 1} of ${path} is not a client record; delete the file (clients register again)`,
        );
      }
      return parsed;
    });
  return { lines, torn: !text.endsWith('\n') && text !== '' };
}

function parseLine(line: string): LogLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.remove === 'string') return { remove: record.remove };
  if (typeof record.add === 'string' && typeof record.client === 'object' && record.client !== null) {
    return { add: record.add, client: record.client as AdapterPayload };
  }
  return undefined;
}
