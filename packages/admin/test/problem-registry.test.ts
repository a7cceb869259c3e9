import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AdminProblemType } from '../src/problem-registry.js';
import { adminProblemRegistry, PROBLEM_TYPE_PREFIX } from '../src/problem-registry.js';

/**
 * Problem types are API, as the MCP side's error codes are
 * (docs/adr/0005-error-registry.md): every type in the admin problem
 * registry is documented in docs/admin-api.md ("Problems") with its status
 * and title, every documented type is registered, every registered type is
 * answered somewhere, and no source builds a problem of the admin namespace
 * except through the registry.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const REGISTRY_FILE = 'packages/admin/src/problem-registry.ts';
const types = Object.keys(adminProblemRegistry) as AdminProblemType[];

interface DocumentedType {
  status: string;
  title: string;
}

/** The rows of the first table under `section` in `file` whose first cell is a backquoted type. */
async function documentedTypes(
  file: string,
  section: string,
  titleColumn: boolean,
): Promise<Map<string, DocumentedType>> {
  const text = await readFile(join(root, file), 'utf8');
  const body = new RegExp(`^## ${section}\\n([\\s\\S]*?)(?=^## )`, 'm').exec(text);
  if (body === null) throw new Error(`${file} has no "## ${section}" section`);
  const rows = new Map<string, DocumentedType>();
  for (const line of body[1]!.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const type = /^`([a-z-]+)`$/.exec(cells[1] ?? '')?.[1];
    // The header row names its columns, not a type.
    if (type === undefined || !/^\d{3}$/.test(cells[2] ?? '')) continue;
    if (rows.has(type)) throw new Error(`${type} is documented twice in ${file}`);
    rows.set(type, { status: cells[2]!, title: titleColumn ? cells[3]! : '' });
  }
  return rows;
}

/** The TypeScript sources of every package and app (not tests, not the registry itself). */
async function sourceFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const group of ['packages', 'apps']) {
    for (const workspace of await readdir(join(root, group))) {
      const src = join(root, group, workspace, 'src');
      const entries = await readdir(src, { recursive: true }).catch(() => [] as string[]);
      for (const entry of entries) {
        const path = join(src, entry);
        if (path.endsWith('.ts') && relative(root, path) !== REGISTRY_FILE) {
          files.set(relative(root, path), await readFile(path, 'utf8'));
        }
      }
    }
  }
  return files;
}

describe('admin problem registry', () => {
  it('documents every type in docs/admin-api.md with its status and title', async () => {
    const documented = await documentedTypes('docs/admin-api.md', 'Problems', true);
    const missing = types.filter((type) => !documented.has(type));
    expect(missing, 'types missing from docs/admin-api.md "Problems"').toEqual([]);
    for (const type of types) {
      const row = documented.get(type)!;
      expect(row.status, `${type} status`).toBe(String(adminProblemRegistry[type].status));
      expect(row.title, `${type} title`).toBe(adminProblemRegistry[type].title);
    }
  });

  it('documents no type the registry does not define', async () => {
    const unknown = [...(await documentedTypes('docs/admin-api.md', 'Problems', true)).keys()].filter(
      (type) => !Object.hasOwn(adminProblemRegistry, type),
    );
    expect(unknown, 'types in docs/admin-api.md that the registry does not define').toEqual([]);
  });

  it("documents the sign-in's refusals in docs/admin-sign-in.md as the registry does", async () => {
    const documented = await documentedTypes('docs/admin-sign-in.md', 'The routes', false);
    const signIn = types.filter((type) => adminProblemRegistry[type].surface === 'sign-in');
    expect(
      signIn.filter((type) => !documented.has(type)),
      'sign-in types missing from docs/admin-sign-in.md',
    ).toEqual([]);
    for (const [type, row] of documented) {
      expect(Object.hasOwn(adminProblemRegistry, type), `${type} in docs/admin-sign-in.md is registered`).toBe(true);
      expect(row.status, `${type} status`).toBe(String(adminProblemRegistry[type as AdminProblemType].status));
    }
  });

  it('defines no type that nothing answers', async () => {
    const sources = [...(await sourceFiles()).values()];
    const unused = types.filter((type) => !sources.some((text) => text.includes(`'${type}'`)));
    expect(unused, 'types defined in the registry but answered nowhere in packages/*/src or apps/*/src').toEqual([]);
  });

  it('leaves the namespace to the registry: no source spells a problem type URI of its own', async () => {
    const spelling = [...(await sourceFiles())].filter(([, text]) => text.includes(PROBLEM_TYPE_PREFIX));
    expect(
      spelling.map(([file]) => file),
      `sources that write ${PROBLEM_TYPE_PREFIX} instead of taking it from the registry`,
    ).toEqual([]);
  });
});
