/**
 * The baseline servers' module (hot-path-server.ts) for a given Node binary.
 * Node 23.6+ runs the TypeScript as it is (type stripping); for an older one,
 * such as the oldest Node the gateway supports (package.json engines, 20.19),
 * the module and the one it imports are written once, their types stripped by
 * this process's Node (`module.stripTypeScriptTypes`, 22.13+), as .mjs files
 * under node_modules/.cache, where their imports still resolve to this
 * repository's packages.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import * as nodeModule from 'node:module';

const FILES = ['hot-path-server', 'ipc-server'] as const;
// Node 22.13+; the repository's @types/node is the oldest supported Node's, which lacks it.
const { stripTypeScriptTypes } = nodeModule as unknown as { stripTypeScriptTypes(code: string): string };

/** The major version of the Node binary at `node`. */
export function nodeMajor(node: string): number {
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  return Number(/^v(\d+)\./.exec(version)?.[1] ?? 0);
}

/** The version string of the Node binary at `node`, e.g. `v26.12.1`. */
export function nodeVersion(node: string): string {
  return execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

export async function baselineServerModule(node: string): Promise<URL> {
  const here = new URL('./', import.meta.url);
  if (nodeMajor(node) >= 24) return new URL('hot-path-server.ts', here);
  const out = new URL('../../node_modules/.cache/mcpgw-bench/', import.meta.url);
  await mkdir(out, { recursive: true });
  for (const name of FILES) {
    const source = await readFile(new URL(`${name}.ts`, here), 'utf8');
    let code = stripTypeScriptTypes(source);
    for (const other of FILES) code = code.replaceAll(`'./${other}.ts'`, `'./${other}.mjs'`);
    await writeFile(new URL(`${name}.mjs`, out), code);
  }
  return new URL('hot-path-server.mjs', out);
}
