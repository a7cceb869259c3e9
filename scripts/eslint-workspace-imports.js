// @ts-check
/**
 * ESLint rules that keep the workspace boundaries:
 *
 * - `workspace/declared-dependencies`: a workspace (packages/*, apps/*,
 *   test/helpers) imports only packages its package.json declares. Its src/
 *   files may use `dependencies`; its other files (tests) also its
 *   `devDependencies` and the root's. A package that works only because
 *   npm hoisted someone else's dependency breaks when that one drops it.
 * - `workspace/through-exports`: another workspace is reached only through
 *   what its package.json "exports" (`@mcpgw/x`, `@mcpgw/gateway/testing`),
 *   never by a deep `@mcpgw/x/src/...` name or a relative path into its
 *   folder. Files outside every workspace (test/integration, bench) may not
 *   reach into a workspace's src/ by path either; a package's own tests use
 *   relative paths into their own src/.
 *
 * Written here rather than taken from eslint-plugin-import-x or
 * eslint-plugin-n: both need a resolver to follow our `.js` specifiers to
 * `.ts` sources and know nothing of the `@mcpgw/source` condition, while
 * these two checks need only the package.json files.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** @param {string} path */
const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/**
 * @typedef {{ dir: string, name: string, dependencies: Set<string>, devDependencies: Set<string>, exports: string[] }} Workspace
 */

/** @returns {Workspace[]} */
function loadWorkspaces() {
  /** @type {string[]} */
  const patterns = readJson(join(root, 'package.json')).workspaces;
  const dirs = patterns.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [join(root, pattern)];
    const parent = join(root, pattern.slice(0, -2));
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(parent, entry.name));
  });
  return dirs
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => {
      const manifest = readJson(join(dir, 'package.json'));
      return {
        dir,
        name: manifest.name,
        dependencies: new Set(Object.keys(manifest.dependencies ?? {})),
        devDependencies: new Set(Object.keys(manifest.devDependencies ?? {})),
        exports: typeof manifest.exports === 'object' ? Object.keys(manifest.exports) : [],
      };
    });
}

const workspaces = loadWorkspaces();
const rootDevDependencies = new Set(Object.keys(readJson(join(root, 'package.json')).devDependencies ?? {}));
const builtins = new Set(builtinModules);

/** @param {string} path */
const workspaceOf = (path) => workspaces.find((ws) => path === ws.dir || path.startsWith(ws.dir + sep));

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. @param {string} specifier */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Whether `./sub` is one of the export keys (exact, or a `./*` pattern). @param {string[]} keys @param {string} sub */
function isExported(keys, sub) {
  return keys.some((key) => {
    const star = key.indexOf('*');
    if (star === -1) return key === sub;
    return sub.startsWith(key.slice(0, star)) && sub.endsWith(key.slice(star + 1));
  });
}

/**
 * Calls `check` with every module specifier a file imports or re-exports.
 * @param {(node: import('estree').Node, specifier: string) => void} check
 * @returns {import('eslint').Rule.RuleListener}
 */
function eachSpecifier(check) {
  /** @param {any} node */
  const visit = (node) => {
    const source = node.source;
    if (source && source.type === 'Literal' && typeof source.value === 'string') check(source, source.value);
  };
  return {
    ImportDeclaration: visit,
    ExportNamedDeclaration: visit,
    ExportAllDeclaration: visit,
    ImportExpression: visit,
  };
}

/** @type {import('eslint').Rule.RuleModule} */
const declaredDependencies = {
  meta: {
    type: 'problem',
    docs: { description: 'A workspace imports only packages its package.json declares.' },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const own = workspaceOf(file);
    if (own === undefined) return {};
    const inSrc = relative(own.dir, file).split(sep)[0] === 'src';
    return eachSpecifier((node, specifier) => {
      if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return;
      const name = packageName(specifier);
      if (builtins.has(name)) return;
      if (own.dependencies.has(name)) return;
      // Node's self-reference through the package's own subpath exports: the
      // test helpers load each other so when benchmarks run them on type stripping.
      if (name === own.name && specifier !== name && isExported(own.exports, `.${specifier.slice(name.length)}`))
        return;
      if (!inSrc && (own.devDependencies.has(name) || rootDevDependencies.has(name))) return;
      const where = inSrc ? 'dependencies' : 'dependencies or devDependencies';
      context.report({
        node,
        message:
          name === own.name
            ? `Import ${own.name}'s own modules by relative path, not through its package name.`
            : `'${name}' is not in the ${where} of ${relative(root, join(own.dir, 'package.json'))}.`,
      });
    });
  },
};

/** @type {import('eslint').Rule.RuleModule} */
const throughExports = {
  meta: {
    type: 'problem',
    docs: { description: "Another workspace's files only through its package.json exports." },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const own = workspaceOf(file);
    return eachSpecifier((node, specifier) => {
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier);
        const owner = workspaceOf(target);
        if (owner === undefined || owner === own) return;
        const reachesSrc = relative(owner.dir, target).split(sep)[0] === 'src';
        if (own === undefined && !reachesSrc) return;
        context.report({ node, message: `Import ${owner.name} by its name, not by a path into its folder.` });
        return;
      }
      const name = packageName(specifier);
      const target = workspaces.find((ws) => ws.name === name);
      if (target === undefined || specifier === name) return;
      const sub = `.${specifier.slice(name.length)}`;
      if (isExported(target.exports, sub)) return;
      context.report({ node, message: `${name} does not export '${sub}': import what its package.json exports.` });
    });
  },
};

/** The local plugin, registered as `workspace` in eslint.config.js. */
export const workspacePlugin = {
  rules: { 'declared-dependencies': declaredDependencies, 'through-exports': throughExports },
};
