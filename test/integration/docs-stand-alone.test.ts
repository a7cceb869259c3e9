import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The repository's docs stand on their own: every relative link resolves to a
// file in the repository, nothing points outside it, and nothing cites a work
// item by number (readers cite the MCP specification and RFCs by section).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function markdownFiles(): string[] {
  const files = ['README.md'];
  const walk = (folder: string): void => {
    for (const name of readdirSync(join(ROOT, folder))) {
      const path = join(folder, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  for (const area of ['packages', 'apps']) {
    for (const name of readdirSync(join(ROOT, area))) {
      if (existsSync(join(ROOT, area, name, 'README.md'))) files.push(join(area, name, 'README.md'));
    }
  }
  return files;
}

const LINK = /\]\(([^)\s]+)\)/g;
const WORK_ITEM = /\b(?:issues?|tasks?|tickets?)\s+#?\d+\b|\(#\d+\)/i;
const OUTSIDE_NAMES = /\b(?:DESIGN|STYLE|FACTS|CONFORMANCE|DEVELOPERS)\.md\b|shared\/(?:spec|seeds)/;

describe('docs stand on their own', () => {
  const files = markdownFiles();

  it('finds the docs it checks', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/security.md', 'docs/configuration.md']));
  });

  it.each(files)('%s: relative links resolve inside the repository', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const [, target] of text.matchAll(LINK)) {
      if (target === undefined || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
      const path = resolve(ROOT, dirname(file), decodeURIComponent(target.split('#')[0] ?? ''));
      if (relative(ROOT, path).startsWith('..') || !existsSync(path)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it.each(files)('%s: cites no work item and no file outside the repository', (file) => {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    const offending = lines.filter((line) => WORK_ITEM.test(line) || OUTSIDE_NAMES.test(line));
    expect(offending).toEqual([]);
  });
});
