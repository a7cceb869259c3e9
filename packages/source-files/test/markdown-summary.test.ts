import { describe, expect, it } from 'vitest';
import { summarizeMarkdown } from '../src/markdown-summary.js';

describe('markdown summaries', () => {
  it('take title and description from YAML front matter', () => {
    expect(
      summarizeMarkdown(
        '---\r\ntitle: "Expenses: travel"\ndescription: >-\n  What you may claim,\n  and how.\n---\n# H\n',
      ),
    ).toEqual({ title: 'Expenses: travel', description: 'What you may claim, and how.' });
  });

  it('accept a byte order mark and a `...` closing line', () => {
    expect(summarizeMarkdown('\uFEFF---\ntitle: T\n...\nbody')).toEqual({ title: 'T' });
  });

  it('fall back to the first level-1 heading when front matter has no title', () => {
    expect(summarizeMarkdown('---\ndescription: D\n---\n\n## Not this\n# This one #\n')).toEqual({
      title: 'This one',
      description: 'D',
    });
  });

  it('skip headings inside code fences and deeper headings', () => {
    expect(summarizeMarkdown('```sh\n# a comment\n```\n## Two\n#NoSpace\n# Real\n')).toEqual({ title: 'Real' });
  });

  it('ignore non-string values and flag front matter that is not a mapping', () => {
    expect(summarizeMarkdown('---\ntitle: 2024\ndescription: [a]\n---\n')).toEqual({});
    expect(summarizeMarkdown('---\n- a list\n---\n# T\n')).toEqual({ invalidFrontMatter: true, title: 'T' });
    expect(summarizeMarkdown('---\ntitle: [unclosed\n---\n')).toEqual({ invalidFrontMatter: true });
    expect(summarizeMarkdown('---\n---\n# Empty block\n')).toEqual({ title: 'Empty block' });
  });

  it('ignore an unclosed block and everything in it', () => {
    expect(summarizeMarkdown('---\ntitle: T\n# Heading\n')).toEqual({});
  });

  it('refuse a YAML alias bomb without expanding it', () => {
    const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 0; i < 8; i += 1) {
      const prev = String.fromCharCode(97 + i);
      const next = String.fromCharCode(98 + i);
      bomb.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const started = performance.now();
    const summary = summarizeMarkdown(`---\n${bomb.join('\n')}\ntitle: T\n---\n`);
    expect(summary.invalidFrontMatter).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
