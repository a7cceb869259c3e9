import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The repository's docs and code stand on their own: every relative link
// resolves to a file in the repository, nothing points outside it, and nothing
// cites a work item by number. A reader has only the repository: comments and
// docs cite the MCP specification by revision and section, RFCs by section,
// and the repository's own ADRs (docs/adr), and say the why themselves.

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

/**
 * Every `.ts`, `.js` and `.mjs` file of the repository (sources, tests,
 * benches, scripts, configuration), and the YAML and Dockerfiles whose
 * comments explain deployment and test settings. Not node_modules or build output, and
 * not test/fixtures/spec: those are verbatim copies of the MCP specification's
 * own files, which may name the specification's own work items, and are
 * compared byte for byte with it, so they are left as published.
 */
function codeFiles(): string[] {
  const skipped = new Set(['node_modules', 'dist', 'coverage', 'test-results', '.git', '.data']);
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(join(ROOT, folder), { withFileTypes: true })) {
      const path = folder === '' ? entry.name : join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!skipped.has(entry.name) && path !== join('test', 'fixtures', 'spec')) walk(path);
      } else if (/\.(?:ts|js|mjs|ya?ml)$/.test(entry.name) || entry.name === 'Dockerfile') {
        files.push(path);
      }
    }
  };
  walk('');
  return files.sort();
}

const LINK = /\]\(([^)\s]+)\)/g;
/** An issue, task or ticket by number, or a bare `#` and a number: a work item. */
const WORK_ITEM = /\b(?:issues?|tasks?|tickets?)\s+#?\d+\b|\(#\d+\)|(?:^|[\s,;])#\d+\b/i;
/**
 * Files a reader of the repository does not have: the design notes kept
 * beside it, and the specification's pages by their file names (cite the
 * revision and section instead: "MCP 2026-07-28, Resources, Annotations").
 */
const OUTSIDE_NAMES =
  /\b(?:DESIGN|STYLE|FACTS|CONFORMANCE|DEVELOPERS)\.md\b|\bshared\/(?:spec|seeds|hooks)\b|(?<![\w-])(?:basic|server|client)-[a-z-]+\.md\b|(?:^|[\s'"`(])\/work\//;

/** Each offending line as `file:line: text`, so a failure names where to look. */
function offendingLines(file: string): string[] {
  return readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .flatMap((line, index) =>
      WORK_ITEM.test(line) || OUTSIDE_NAMES.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
    );
}

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
    expect(offendingLines(file)).toEqual([]);
  });
});

describe('code stands on its own', () => {
  const files = codeFiles();

  it('finds the code it checks', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'eslint.config.js',
        'scripts/conformance.mjs',
        'packages/core/src/index.ts',
        'apps/gateway/src/main.ts',
        'test/integration/docs-stand-alone.test.ts',
        'test/conformance/expected-failures.yaml',
      ]),
    );
    expect(files.some((file) => file.includes('node_modules') || file.startsWith('test/fixtures/spec/'))).toBe(false);
  });

  it('knows a work item and an outside file when it sees one', () => {
    // Built from parts, so that this file does not itself name what it refuses.
    const n = 22;
    for (const line of [`// see issue ${n}`, ` * (tasks ${n} and 4)`, `// fixed in (#${n})`, `// per #${n}`]) {
      expect(WORK_ITEM.test(line), line).toBe(true);
    }
    const md = '.md';
    for (const line of [
      ` * (DESIGN${md}, "Sources")`,
      `// shared/${'spec'}/2026-07-28`,
      `// server-resources${md}#x`,
    ]) {
      expect(OUTSIDE_NAMES.test(line), line).toBe(true);
    }
    for (const line of [
      "'file:///docs/a.md'",
      '// RFC 9457 section 3.1',
      '// docs/adr/0004-change-hub.md',
      "href: '#top'",
    ]) {
      expect(WORK_ITEM.test(line) || OUTSIDE_NAMES.test(line), line).toBe(false);
    }
  });

  // One test for the whole tree, so a failure lists every offending line at once.
  it('no .ts, .js, .mjs, YAML or Dockerfile cites a work item or a file outside the repository', () => {
    expect(files.flatMap(offendingLines)).toEqual([]);
  });
});
