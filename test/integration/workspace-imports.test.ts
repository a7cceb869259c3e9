import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The workspace boundaries are lint rules (eslint.config.js, scripts/eslint-workspace-imports.js),
// run by `npm run lint`: a package imports only what its package.json declares, and another
// workspace only through what that one exports. Each case lints one line as if it were a file
// at the given path, through the real configuration.

const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function problems(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const used = x;\n`, { filePath: `${root}${path}` });
  return (result?.messages ?? []).filter((m) => m.ruleId?.startsWith('workspace/')).map((m) => m.message);
}

describe('workspace imports', () => {
  it.each([
    [
      'packages/catalog/src/x.ts',
      "import { x } from 'zod';",
      "'zod' is not in the dependencies of packages/catalog/package.json.",
    ],
    [
      'packages/catalog/src/x.ts',
      "import { x } from '@mcpgw/source-static';",
      "'@mcpgw/source-static' is not in the dependencies of packages/catalog/package.json.",
    ],
    [
      'packages/catalog/src/x.ts',
      "import { x } from '@mcpgw/core/src/errors.js';",
      "@mcpgw/core does not export './src/errors.js': import what its package.json exports.",
    ],
    [
      'packages/catalog/src/x.ts',
      "import { x } from '../../core/src/errors.js';",
      'Import @mcpgw/core by its name, not by a path into its folder.',
    ],
    [
      'packages/catalog/test/x.test.ts',
      "import { x } from '../../core/src/errors.js';",
      'Import @mcpgw/core by its name, not by a path into its folder.',
    ],
    [
      'test/integration/x.test.ts',
      "import { x } from '../../apps/gateway/src/app.js';",
      'Import @mcpgw/gateway by its name, not by a path into its folder.',
    ],
    [
      'bench/x.ts',
      "import { x } from '@mcpgw/gateway/src/app.js';",
      "@mcpgw/gateway does not export './src/app.js': import what its package.json exports.",
    ],
    [
      'packages/catalog/test/x.test.ts',
      "import { x } from '@mcpgw/catalog';",
      "Import @mcpgw/catalog's own modules by relative path, not through its package name.",
    ],
  ])('%s: %s is refused', async (path, code, message) => {
    expect(await problems(path, code)).toEqual([message]);
  });

  it.each([
    ['packages/source-postgres/src/x.ts', "import { x } from 'zod';"],
    ['packages/catalog/src/x.ts', "import { x } from '@mcpgw/core';"],
    ['packages/catalog/src/x.ts', "import { x } from 'node:fs';"],
    ['packages/catalog/test/x.test.ts', "import { x } from '../src/catalog.js';"],
    ['packages/catalog/test/x.test.ts', "import { x } from '@mcpgw/source-static';"],
    ['packages/catalog/test/x.test.ts', "import { x } from 'vitest';"],
    ['packages/cache/test/x.test.ts', "import { x } from '@mcpgw/test-helpers/redis';"],
    ['test/integration/x.test.ts', "import { x } from '@mcpgw/gateway/testing';"],
    ['test/helpers/x.ts', "import { x } from '@mcpgw/test-helpers/free-port';"],
  ])('%s: %s is allowed', async (path, code) => {
    expect(await problems(path, code)).toEqual([]);
  });
});
