import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderEnvExample, withEnvTable } from '@mcpgw/config';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';

// The environment is described once, beside its schema (packages/config/src/env.ts); the table of
// docs/configuration.md and .env.example are generated from it by `npm run docs:env`
// (scripts/generate-env-docs.mjs). Either file edited by hand, or a setting added or changed
// without running the generator, fails here.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REGENERATE = 'out of date with packages/config/src/env.ts: run `npm run docs:env`';

describe('the environment is documented from its schema', () => {
  it('docs/configuration.md holds the table the schema generates', async () => {
    const path = join(ROOT, 'docs/configuration.md');
    const text = await readFile(path, 'utf8');
    const expected = await prettier.format(withEnvTable(text), {
      ...(await prettier.resolveConfig(path)),
      filepath: path,
    });
    expect(text, `docs/configuration.md is ${REGENERATE}`).toBe(expected);
  });

  it('.env.example is the one the schema generates', async () => {
    const text = await readFile(join(ROOT, '.env.example'), 'utf8');
    expect(text, `.env.example is ${REGENERATE}`).toBe(renderEnvExample());
  });

  it('every setting is in the table, and its default is the schema default', async () => {
    const text = await readFile(join(ROOT, 'docs/configuration.md'), 'utf8');
    expect(text).toMatch(/^\| `DATA_DIR` +\| `\.data` +\|/m);
    expect(text).toMatch(/^\| `PORT` +\| `8080` +\|/m);
    expect(text).toMatch(/^\| `SECRETS_KEY` +\| unset: random per process +\|/m);
    expect(renderEnvExample()).toMatch(/^RATE_LIMIT_TENANT_PER_MINUTE=60000$/m);
  });
});
