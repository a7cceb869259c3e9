import { describe, expect, it } from 'vitest';
import { filesSourceFactory } from '../src/files-source-factory.js';

async function validate(config: unknown) {
  return filesSourceFactory.optionsSchema['~standard'].validate(config);
}

describe('files source options', () => {
  it('apply the documented defaults', async () => {
    expect(await validate({ root: './handbook' })).toEqual({
      value: {
        root: './handbook',
        maxFileBytes: 10 * 1024 * 1024,
        directoryRead: { maxFiles: 50, maxTotalBytes: 5 * 1024 * 1024 },
        maxEntries: 100_000,
      },
    });
    expect(await validate({ root: 'x', directoryRead: { maxFiles: 3 } })).toMatchObject({
      value: { directoryRead: { maxFiles: 3, maxTotalBytes: 5 * 1024 * 1024 } },
    });
  });

  it.each([
    [{}, 'root'],
    [{ root: '' }, 'root'],
    [{ root: 'x', maxFileBytes: 0 }, 'maxFileBytes'],
    [{ root: 'x', maxFileBytes: 1.5 }, 'maxFileBytes'],
    [{ root: 'x', maxEntrys: 5 }, ''],
    [{ root: 'x', directoryRead: { maxFile: 5 } }, 'directoryRead'],
    [{ root: 'x', directoryRead: { maxTotalBytes: -1 } }, 'directoryRead.maxTotalBytes'],
  ])('refuse %j, naming %j', async (config, path) => {
    const result = await validate(config);
    expect(result.issues).toBeDefined();
    const paths = (result.issues ?? []).map((i) => (i.path ?? []).map(String).join('.'));
    expect(paths).toContain(path);
  });
});
