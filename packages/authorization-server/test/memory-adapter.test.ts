import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryAdapter } from '../src/memory-adapter.js';
import type { Logger } from '@mcpgw/core';

// Registration is open, so what a caller can make the development server
// store must be bounded, and cheap to store: a capped set of clients, one
// appended line per registration.

let dir: string;
let log: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dev-adapter-'));
  log = join(dir, 'clients.jsonl');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const client = (id: string) => ({ client_id: id, redirect_uris: ['http://127.0.0.1:9/cb'] });

/** A Logger that keeps what it is given. */
function recordingLogger(entries: { level: string; obj: object; msg: string | undefined }[] = []): Logger & {
  entries: { level: string; obj: object; msg: string | undefined }[];
} {
  const at = (level: string) => (obj: object, msg?: string) => void entries.push({ level, obj, msg });
  return {
    entries,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => recordingLogger(entries),
  };
}

describe('the memory adapter client store', () => {
  it('keeps at most maxClients, forgetting the oldest, also across a restart', async () => {
    const logger = recordingLogger();
    const adapter = await createMemoryAdapter({ clientsLog: log, maxClients: 3, logger });
    const clients = adapter.factory('Client');
    for (const id of ['a', 'b', 'c', 'd']) await clients.upsert(id, client(id), 0);
    await expect(clients.find('a')).resolves.toBeUndefined();
    await expect(clients.find('d')).resolves.toMatchObject({ client_id: 'd' });
    expect(logger.entries.map((entry) => entry.obj)).toContainEqual({ clientId: 'a', maxClients: 3 });
    await adapter.flush();

    const restarted = (await createMemoryAdapter({ clientsLog: log, maxClients: 3, logger })).factory('Client');
    expect(await Promise.all(['a', 'b', 'c', 'd'].map(async (id) => (await restarted.find(id)) !== undefined))).toEqual(
      [false, true, true, true],
    );
  });

  it('appends one line per registration instead of rewriting the file', async () => {
    const adapter = await createMemoryAdapter({ clientsLog: log, maxClients: 100, logger: recordingLogger() });
    const clients = adapter.factory('Client');
    let before = '';
    for (const id of ['a', 'b', 'c']) {
      await clients.upsert(id, client(id), 0);
      const after = await readFile(log, 'utf8');
      expect(after.startsWith(before)).toBe(true);
      expect(after.slice(before.length).split('\n')).toHaveLength(2);
      before = after;
    }
    expect((await stat(log)).mode & 0o777).toBe(0o600);
  });

  it('stays bounded on disk however many clients register', async () => {
    const adapter = await createMemoryAdapter({ clientsLog: log, maxClients: 5, logger: recordingLogger() });
    const clients = adapter.factory('Client');
    for (let i = 0; i < 200; i++) await clients.upsert(`c${i}`, client(`c${i}`), 0);
    await adapter.flush();
    const lines = (await readFile(log, 'utf8')).split('\n').length - 1;
    expect(lines).toBeLessThanOrEqual(2 * 5 + 2);
  });

  it('drops a torn last line', async () => {
    const first = await createMemoryAdapter({ clientsLog: log, maxClients: 5, logger: recordingLogger() });
    await first.factory('Client').upsert('old', client('old'), 0);
    await first.flush();

    await writeFile(log, `${await readFile(log, 'utf8')}{"add":"torn","cli`);
    const second = await createMemoryAdapter({ clientsLog: log, maxClients: 5, logger: recordingLogger() });
    await expect(second.factory('Client').find('old')).resolves.toMatchObject({ client_id: 'old' });
    await expect(second.factory('Client').find('torn')).resolves.toBeUndefined();
    // What is appended next is a line of its own, not glued to the torn one.
    await second.factory('Client').upsert('next', client('next'), 0);
    await second.flush();
    const third = await createMemoryAdapter({ clientsLog: log, maxClients: 5, logger: recordingLogger() });
    await expect(third.factory('Client').find('next')).resolves.toMatchObject({ client_id: 'next' });
  });
});
