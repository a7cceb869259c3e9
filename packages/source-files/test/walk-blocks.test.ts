import { describe, expect, it } from 'vitest';
import { walkBlocks } from '../src/walk-blocks.js';

describe('the parts of the tree a narrowed listing walks', () => {
  it('maps a folder prefix to that folder and a partial name to the names starting with it', () => {
    expect(walkBlocks('docs', ['file:///docs/reports/finance/'])).toEqual([
      { folder: ['reports', 'finance'], namePrefix: '' },
    ]);
    expect(walkBlocks('docs', ['file:///docs/reports/q'])).toEqual([{ folder: ['reports'], namePrefix: 'q' }]);
    expect(walkBlocks('docs', ['file:///docs/a%20b/caf%C3'])).toEqual([{ folder: ['a b'], namePrefix: 'caf' }]);
  });

  it('orders blocks as the walk does and drops those inside another', () => {
    expect(walkBlocks('docs', ['file:///docs/a/x/', 'file:///docs/a-b/', 'file:///docs/a/'])).toEqual([
      { folder: ['a'], namePrefix: '' },
      { folder: ['a-b'], namePrefix: '' },
    ]);
    // Cut back to whole characters, `caf%C3` covers `cafe`.
    expect(walkBlocks('docs', ['file:///docs/cafe', 'file:///docs/caf%C3'])).toEqual([
      { folder: [], namePrefix: 'caf' },
    ]);
  });

  it('walks the whole tree for a prefix covering the source, nothing for one outside or not canonical', () => {
    expect(walkBlocks('docs', ['file:///docs/a/', 'file:///do'])).toEqual([{ folder: [], namePrefix: '' }]);
    expect(
      walkBlocks('docs', ['file:///docsx/a/', 's3:///docs/a/', 'file:///docs/%61/', 'file:///docs/.git/']),
    ).toEqual([]);
  });
});
