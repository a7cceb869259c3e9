import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ErrorDefinition, GatewayErrorCode } from '@mcpgw/core';
import { errorRegistry } from '@mcpgw/core';

/**
 * Error codes are API (after Fastify's errors registry and its docs test):
 * every code in the registry is documented in docs/protocol.md with the
 * JSON-RPC code, HTTP status and message the registry gives it, every
 * documented code exists, and every code is raised somewhere, so neither
 * the docs nor the registry keep a code nobody can receive.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const REGISTRY_FILE = 'packages/core/src/error-registry.ts';
const codes = Object.keys(errorRegistry) as GatewayErrorCode[];

interface DocumentedCode {
  jsonRpc: string;
  http: string;
  message: string;
}

/** The rows of the table under "## Error codes", by code. */
async function documentedCodes(): Promise<Map<string, DocumentedCode>> {
  const text = await readFile(join(root, 'docs/protocol.md'), 'utf8');
  const section = /^## Error codes\n([\s\S]*?)(?=^## )/m.exec(text);
  if (section === null) throw new Error('docs/protocol.md has no "## Error codes" section');
  const rows = new Map<string, DocumentedCode>();
  for (const line of section[1]!.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const code = /^`(MCPGW_[A-Z_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (code === undefined) continue;
    if (rows.has(code)) throw new Error(`${code} is documented twice`);
    rows.set(code, { jsonRpc: cells[2]!, http: cells[3]!, message: cells[4]! });
  }
  return rows;
}

/** The wire columns as the docs spell them; the HTTP cell may go on after a comma. */
function expectedColumns(definition: ErrorDefinition): DocumentedCode {
  const legacy = definition.legacy;
  return {
    jsonRpc: `${definition.jsonRpcCode}${legacy?.jsonRpcCode === undefined ? '' : ` (legacy ${legacy.jsonRpcCode})`}`,
    http: `${definition.httpStatus}${legacy?.httpStatus === undefined ? '' : ` (legacy ${legacy.httpStatus})`}`,
    message: `\`${definition.message}\``,
  };
}

/** The TypeScript sources of every package and app (not tests, not the registry itself). */
async function sourceFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const group of ['packages', 'apps']) {
    for (const workspace of await readdir(join(root, group))) {
      const src = join(root, group, workspace, 'src');
      const entries = await readdir(src, { recursive: true }).catch(() => [] as string[]);
      for (const entry of entries) {
        const path = join(src, entry);
        if (path.endsWith('.ts') && relative(root, path) !== REGISTRY_FILE) files.push(path);
      }
    }
  }
  return files;
}

describe('error registry', () => {
  it('documents every code in docs/protocol.md with its JSON-RPC code, HTTP status and message', async () => {
    const documented = await documentedCodes();
    const missing = codes.filter((code) => !documented.has(code));
    expect(missing, 'codes missing from docs/protocol.md "Error codes"').toEqual([]);
    for (const code of codes) {
      const row = documented.get(code)!;
      const expected = expectedColumns(errorRegistry[code]);
      expect(row.jsonRpc, `${code} JSON-RPC code`).toBe(expected.jsonRpc);
      expect(row.http === expected.http || row.http.startsWith(`${expected.http}, `), `${code} HTTP status`).toBe(true);
      expect(row.message, `${code} message`).toBe(expected.message);
    }
  });

  it('documents no code the registry does not define', async () => {
    const unknown = [...(await documentedCodes()).keys()].filter((code) => !Object.hasOwn(errorRegistry, code));
    expect(unknown, 'codes in docs/protocol.md that the registry does not define').toEqual([]);
  });

  it('defines no code that nothing raises', async () => {
    const sources = await Promise.all((await sourceFiles()).map((file) => readFile(file, 'utf8')));
    const unused = codes.filter((code) => !sources.some((text) => text.includes(`'${code}'`)));
    expect(unused, 'codes defined in the registry but raised nowhere in packages/*/src or apps/*/src').toEqual([]);
  });
});
