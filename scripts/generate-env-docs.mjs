#!/usr/bin/env node
// @ts-check
/**
 * Writes the environment table of docs/configuration.md (between its markers)
 * and the whole of .env.example from the environment schema's documentation
 * (packages/config/src/env.ts), so that the settings are described once.
 * `npm run docs:env` builds first: this reads the built @mcpgw/config.
 * test/integration/env-docs.test.ts fails when either file differs from what
 * this would write.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { renderEnvExample, withEnvTable } from '@mcpgw/config';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const doc = join(root, 'docs/configuration.md');
const generated = withEnvTable(await readFile(doc, 'utf8'));
// Formatted as `npm run lint` checks it, so the generated table is what prettier keeps.
const formatted = await prettier.format(generated, { ...(await prettier.resolveConfig(doc)), filepath: doc });
await writeFile(doc, formatted);
await writeFile(join(root, '.env.example'), renderEnvExample());
process.stdout.write('wrote docs/configuration.md (environment table) and .env.example\n');
