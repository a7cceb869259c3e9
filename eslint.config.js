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
