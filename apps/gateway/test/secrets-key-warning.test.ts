import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';

// Without SECRETS_KEY every key of the process comes from one random secret of its own
// (createServerKeys, docs/adr/0009-one-key-per-purpose.md), and the operator is told so once,
// at start; with it, nothing is said.

const UNSET = 'SECRETS_KEY is unset';

async function warningsAtStart(env: Record<string, string>): Promise<string[]> {
  const messages: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { level?: number; msg?: string };
        if (entry.level === 40 && typeof entry.msg === 'string') messages.push(entry.msg);
      }
      done();
    },
  });
  const { close } = await buildTestApp({ env, logStream });
  await close();
  return messages.filter((message) => message.startsWith(UNSET));
}

describe('the SECRETS_KEY warning', () => {
  it('is logged once when SECRETS_KEY is unset', async () => {
    expect(await warningsAtStart({})).toEqual([
      'SECRETS_KEY is unset: cursors and cache keys use a random per-process key, so they do not survive a restart or work across replicas',
    ]);
  });

  it('is not logged when SECRETS_KEY is set', async () => {
    expect(await warningsAtStart({ SECRETS_KEY: 'a test SECRETS_KEY of at least thirty-two characters' })).toEqual([]);
  });
});
