// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { workspacePlugin } from './scripts/eslint-workspace-imports.js';

/** kebab-case, with dotted suffixes: `verify-access-token.ts`, `catalog.test.ts`, `vitest.config.ts`. */
const KEBAB_CASE_FILE = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)*$/;

/** Local rules: house conventions no published plugin states as we want them. */
const local = {
  rules: {
    /** One naming scheme for files (kebab-case), so a name says where a concept lives. */
    'filename-case': {
      meta: { type: 'suggestion', schema: [], messages: { kebab: 'File name "{{name}}" is not kebab-case.' } },
      create(context) {
        return {
          Program(node) {
            const name = context.filename.split(/[\\/]/).at(-1) ?? '';
            if (!KEBAB_CASE_FILE.test(name)) context.report({ node, messageId: 'kebab', data: { name } });
          },
        };
      },
    },
    /**
     * Tests wait on events, not on the clock: a fixed sleep passes or fails by how
     * fast the machine is. Refuses `new Promise((r) => setTimeout(r, n))` (also
     * `setTimeout(() => r(), n)`), the promise timers of `node:timers/promises` and
     * `promisify(setTimeout)`. A timer that rejects (a deadline) is fine. And one way to
     * poll: `vi.waitFor`/`vi.waitUntil` are refused in favour of within().
     */
    'no-bare-sleep': {
      meta: {
        type: 'problem',
        schema: [],
        messages: {
          sleep:
            'No fixed sleeps in tests: wait for the event itself, with within() from @mcpgw/test-helpers/within, or fake the clock (vi.useFakeTimers).',
          poll: 'One polling helper: within() from @mcpgw/test-helpers/within (it names what it waited for and the last value seen).',
        },
      },
      create(context) {
        const TIMER_MODULES = new Set(['timers/promises', 'node:timers/promises']);
        const isTimer = (callee) =>
          (callee.type === 'Identifier' && /settimeout$/i.test(callee.name)) ||
          (callee.type === 'MemberExpression' &&
            callee.property.type === 'Identifier' &&
            callee.property.name === 'setTimeout');
        /** The name of the `resolve` parameter of the nearest enclosing `new Promise(executor)`. */
        const resolverAround = (node) => {
          for (let at = node.parent; at; at = at.parent) {
            const executor = at.parent;
            if (
              (at.type === 'ArrowFunctionExpression' || at.type === 'FunctionExpression') &&
              executor?.type === 'NewExpression' &&
              executor.callee.type === 'Identifier' &&
              executor.callee.name === 'Promise' &&
              executor.arguments[0] === at
            ) {
              const first = at.params[0];
              return first?.type === 'Identifier' ? first.name : undefined;
            }
          }
          return undefined;
        };
        /** `resolve`, `() => resolve()` or `() => { resolve(); }`. */
        const onlyResolves = (callback, resolve) => {
          if (callback.type === 'Identifier') return callback.name === resolve;
          if (callback.type !== 'ArrowFunctionExpression' && callback.type !== 'FunctionExpression') return false;
          let body = callback.body;
          if (body.type === 'BlockStatement') {
            if (body.body.length !== 1 || body.body[0].type !== 'ExpressionStatement') return false;
            body = body.body[0].expression;
          }
          return body.type === 'CallExpression' && body.callee.type === 'Identifier' && body.callee.name === resolve;
        };
        return {
          ImportDeclaration(node) {
            if (TIMER_MODULES.has(node.source.value)) context.report({ node, messageId: 'sleep' });
          },
          ImportExpression(node) {
            if (node.source.type === 'Literal' && TIMER_MODULES.has(node.source.value))
              context.report({ node, messageId: 'sleep' });
          },
          CallExpression(node) {
            const { callee } = node;
            if (
              callee.type === 'MemberExpression' &&
              callee.object.type === 'Identifier' &&
              callee.object.name === 'vi' &&
              callee.property.type === 'Identifier' &&
              (callee.property.name === 'waitFor' || callee.property.name === 'waitUntil')
            ) {
              context.report({ node, messageId: 'poll' });
              return;
            }
            const [callback] = node.arguments;
            if (
              node.callee.type === 'Identifier' &&
              node.callee.name === 'promisify' &&
              callback?.type === 'Identifier' &&
              callback.name === 'setTimeout'
            ) {
              context.report({ node, messageId: 'sleep' });
              return;
            }
            if (!isTimer(node.callee) || callback === undefined) return;
            const resolve = resolverAround(node);
            if (resolve !== undefined && onlyResolves(callback, resolve)) context.report({ node, messageId: 'sleep' });
          },
        };
      },
    },
  },
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '.data/**', '.conformance/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { local },
    rules: { 'local/filename-case': 'error' },
  },
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Only packages/config reads the environment, so every setting is validated once, at start.
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through @mcpgw/config.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          // A past bug class in the MCP SDK: substring-matching media types.
          selector: "CallExpression[callee.property.name='includes'][arguments.0.value='application/json']",
          message: 'Parse the media type instead of substring-matching application/json.',
        },
      ],
    },
  },
  {
    // Workspace boundaries: declared dependencies only, other workspaces only through their exports.
    files: ['**/*.ts', '**/*.js', '**/*.mjs'],
    plugins: { workspace: workspacePlugin },
    rules: { 'workspace/declared-dependencies': 'error', 'workspace/through-exports': 'error' },
  },
  {
    files: [
      'packages/config/**',
      'test/**',
      'bench/**',
      'docs/examples/**',
      '**/test/**',
      'vitest.config.ts',
      'scripts/**',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // Tests wait on events, not on the clock; the polling helper is the one place that sleeps.
    files: ['test/**', '**/test/**'],
    ignores: ['test/helpers/within.ts'],
    rules: { 'local/no-bare-sleep': 'error' },
  },
  {
    // An ES import of node:http loads Node's bundled undici (Node 22 and later); packages/core's
    // nodeHttp requires it instead. Type-only imports are erased and stay allowed.
    files: ['packages/*/src/**/*.ts', 'apps/*/src/**/*.ts'],
    ignores: ['packages/core/src/node-http.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['node:http', 'http'].map((name) => ({
            name,
            allowTypeImports: true,
            message: "Use nodeHttp from '@mcpgw/core': an ES import of node:http loads Node's bundled undici.",
          })),
        },
      ],
    },
  },
  {
    // Only the app adapts to the framework: packages stay framework-free.
    files: ['packages/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['fastify', 'fastify/*', '@fastify/*', 'pino'],
              message: 'Only apps/gateway imports Fastify or pino.',
            },
          ],
        },
      ],
    },
  },
);
