import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSource, listAll, textOf } from './helpers.js';

// The demo tenant's bundled corpus (apps/gateway/demo/handbook), served by
// this source when the gateway starts without a config: what a newcomer
// browses first, so every chapter must list with a real title and description.
const handbook = fileURLToPath(new URL('../../../apps/gateway/demo/handbook/', import.meta.url));

describe('the demo handbook', () => {
  it('lists every chapter with a title and a one-sentence description', async () => {
    const source = await createSource({ root: handbook }, '/');
    const { items } = await listAll(source, 100);
    const chapters = items.filter((r) => r.mimeType === 'text/markdown');
    expect(chapters.length).toBeGreaterThanOrEqual(6);
    expect(chapters.length).toBeLessThanOrEqual(8);
    for (const chapter of chapters) {
      expect(chapter.uri).toMatch(/^file:\/\/\/docs\/\d\d-[a-z-]+\.md$/);
      expect(chapter.title, chapter.name).toMatch(/^[A-Z]/);
      expect(chapter.description, chapter.name).toMatch(/^[A-Z][^.]*\.$/);
      expect(chapter.size, chapter.name).toBeGreaterThan(1500);
    }
    expect(items.map((r) => r.uri)).toEqual(
      expect.arrayContaining([
        'file:///docs/',
        'file:///docs/policies/',
        'file:///docs/policies/office-closures-2026.json',
        'file:///docs/policies/travel-per-diem.csv',
      ]),
    );
    expect(JSON.stringify(items)).not.toContain(handbook);
  });

  it('reads a chapter as markdown text and the policies folder as its two files', async () => {
    const source = await createSource({ root: handbook }, '/');
    expect(textOf(await source.read('file:///docs/01-welcome.md'))).toContain('# Welcome to Brindlewood Instruments');
    const policies = await source.read('file:///docs/policies/');
    expect(policies?.map((c) => [c.uri, c.mimeType])).toEqual([
      ['file:///docs/policies/office-closures-2026.json', 'application/json'],
      ['file:///docs/policies/travel-per-diem.csv', 'text/csv'],
    ]);
    const closures = policies?.[0];
    expect(JSON.parse(closures && 'text' in closures ? closures.text : '')).toMatchObject({ year: 2026 });
  });
});
