import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources of the workspace packages, so a
// test run never depends on a stale build: `@mcpgw/x` resolves to
// packages/x/src/index.ts here (the `@mcpgw/source` export condition, for tsc),
// `@mcpgw/gateway/testing` to the app's testing module and
// `@mcpgw/test-helpers/x` to test/helpers/x.ts (their package.json "exports").
const at = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const alias = [
  { find: /^@mcpgw\/test-helpers\/([a-z0-9-]+)$/, replacement: `${at('./test/helpers/')}$1.ts` },
  { find: /^@mcpgw\/gateway\/testing$/, replacement: at('./apps/gateway/src/testing.ts') },
  { find: /^@mcpgw\/([a-z0-9-]+)$/, replacement: `${at('./packages/')}$1/src/index.ts` },
];

export default defineConfig({
  resolve: { alias },
  test: {
    // CI also writes a JSON report, from which .ci/run prints the plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results/vitest.json' }]] : ['default'],
    // Services (Postgres, Redis, S3) are real; a missing one fails loudly.
    // Where no URL is given and nothing answers on loopback, a container is started if Docker answers.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
        },
      },
      {
        // Fault tests (docs/operations.md, "Fault tests"): real processes on loopback, stopped
        // and started under load. `npm run test:faults` runs them alone; `npm test` runs them too.
        extends: true,
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          // After every other project and one file at a time: a flood or a restart must not
          // borrow another test's CPU, nor be slowed by it (timing is part of what they assert).
          sequence: { groupOrder: 1 },
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 90_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'conformance',
          include: ['test/conformance/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
