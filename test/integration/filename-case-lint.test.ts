import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The repository's ESLint configuration keeps file names kebab-case (one naming scheme, so a name says where a concept lives).
const eslint = new ESLint({ cwd: fileURLToPath(new URL('../..', import.meta.url)) });

async function ruleIdsFor(filePath: string): Promise<Array<string | null>> {
  const [result] = await eslint.lintText('export const value = 1;\n', { filePath });
  return (result?.messages ?? []).map((message) => message.ruleId);
}

describe('the filename-case lint rule', () => {
  it('refuses camelCase, PascalCase and snake_case file names', async () => {
    for (const name of ['packages/core/src/formatBytes.ts', 'apps/gateway/src/DevIssuer.ts', 'bench/cache_list.ts']) {
      expect(await ruleIdsFor(name), name).toContain('local/filename-case');
    }
  });

  it('accepts kebab-case names with dotted suffixes', async () => {
    for (const name of [
      'packages/core/src/format-bytes.ts',
      'packages/core/test/format-bytes.test.ts',
      'vitest.config.ts',
    ]) {
      expect(await ruleIdsFor(name), name).not.toContain('local/filename-case');
    }
  });
});
