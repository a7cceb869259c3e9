import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadOnFirstUse } from '../src/load-on-first-use.js';

const require = createRequire(import.meta.url);
// A JSON file goes through the same CommonJS loader and module cache as a driver package would.
const STAND_IN = './fixtures/driver-stand-in.json';

describe('loadOnFirstUse', () => {
  it('loads nothing until first used, then the module once, resolved from the importer', () => {
    const path = require.resolve(STAND_IN);
    delete require.cache[path];
    const load = loadOnFirstUse<{ name: string }>(STAND_IN, import.meta.url);
    expect(require.cache[path]).toBeUndefined();

    const first = load();
    expect(first).toEqual({ name: 'a stand-in for a driver package' });
    expect(require.cache[path]).toBeDefined();
    expect(load()).toBe(first);
  });

  it('fails on first use, naming the module, when it cannot be found', () => {
    const load = loadOnFirstUse('./fixtures/no-such-driver.json', import.meta.url);
    expect(() => load()).toThrow(/no-such-driver/);
  });
});
