import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { SourceFactory } from '@mcpgw/core';
import { ConfigError } from '../src/config-error.js';
import { loadConfig } from '../src/load-config.js';

// One start shows every problem it can find: the environment's and the bootstrap file's together,
// and in the file, a tenant its schema refuses hides nothing of the others (nor of its own
// sources). An operator fixes one list, not a list, then another after the next restart.

const folder: SourceFactory<{ root: string }> = {
  type: 'folder',
  optionsSchema: z.strictObject({ root: z.string().min(1) }),
  model: { credentials: [], targets: [], operatorOnly: true },
  create: () => {
    throw new Error('not used');
  },
};
const registry = new Map<string, SourceFactory>([['folder', folder as SourceFactory]]);
const demo = { document: { tenants: [] }, configDir: '/' };
const idp = { issuer: 'https://idp.example.com/', jwksUri: 'https://idp.example.com/jwks' };

async function bootstrapFile(document: unknown): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'gw-one-pass-')), 'gateway.json');
  await writeFile(path, JSON.stringify(document));
  return path;
}

async function refusal(env: Record<string, string>): Promise<ConfigError> {
  const error = await loadConfig({ registry, defaultBootstrap: demo, env }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

describe('one pass over the configuration', () => {
  it("reports a tenant's schema problems, its sources' options and every other tenant's rules at once", async () => {
    const path = await bootstrapFile({
      tenants: [
        {
          id: 'acme',
          auth: { issuers: [idp] },
          // Schema: a grant without "allow".
          grants: [{ name: 'everyone', match: {} }],
          // Options of its type: an unknown key.
          sources: [{ id: 'docs', type: 'folder', root: 'r', colour: 'red' }],
        },
        {
          id: 'globex',
          auth: { issuers: [idp] },
          // Rule: a grant naming a source the tenant lacks.
          grants: [{ name: 'everyone', match: {}, allow: [{ source: 'nope' }] }],
          // Rule: a source type nobody registered.
          sources: [{ id: 'files', type: 'ftp' }],
        },
        // Across tenants: a duplicate id.
        { id: 'globex', auth: { issuers: [idp] }, sources: [{ id: 's', type: 'folder', root: 'r' }] },
      ],
    });
    const error = await refusal({ GATEWAY_CONFIG: path });
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'tenants[0].grants[0].allow',
      'tenants[0].sources[0]',
      'tenants[1].grants[0].allow[0].source',
      'tenants[1].sources[0].type',
      'tenants[2].id',
    ]);
    expect(error.issues[1]?.message).toContain('colour');
  });

  it("reports the environment's and the file's problems together, naming both origins", async () => {
    const path = await bootstrapFile({
      tenants: [{ id: 'Acme!', anonymous: true, sources: [{ id: 'docs', type: 'folder', root: '' }] }],
    });
    const error = await refusal({ GATEWAY_CONFIG: path, PORT: 'eighty', OPERATOR_ISUER: 'https://idp.example.com' });
    expect(error.message).toContain(`Invalid configuration (environment and ${path})`);
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'env.PORT',
      'env.OPERATOR_ISUER',
      'tenants[0].id',
      'tenants[0].sources[0].root',
    ]);
  });

  it('checks the file against the rest of a refused environment: HOST still decides what is allowed', async () => {
    const path = await bootstrapFile({
      tenants: [{ id: 'acme', anonymous: true, sources: [{ id: 'docs', type: 'folder', root: 'r' }] }],
    });
    const error = await refusal({ GATEWAY_CONFIG: path, HOST: '0.0.0.0', PUBLIC_URL: 'not a url' });
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'env.PUBLIC_URL',
      'env.DATABASE_URL',
      'tenants[0].anonymous',
    ]);
  });

  it("leaves alone the variables the file names with $env, even under the gateway's prefixes", async () => {
    const document = {
      tenants: [
        { id: 'acme', anonymous: true, sources: [{ id: 'docs', type: 'folder', root: { $env: 'GATEWAY_DOCS_ROOT' } }] },
      ],
    };
    const config = await loadConfig({
      registry,
      defaultBootstrap: demo,
      env: { GATEWAY_CONFIG: await bootstrapFile(document), GATEWAY_DOCS_ROOT: '/srv/docs' },
    });
    expect(config.tenants[0]?.sources[0]?.options).toEqual({ root: '/srv/docs' });
    // Not referenced, the same name is one the gateway would read if it existed.
    const error = await refusal({ GATEWAY_CONFIG: await bootstrapFile(demoWith('/srv')), GATEWAY_DOCS_ROOT: '/x' });
    expect(error.issues).toEqual([expect.objectContaining({ path: 'env.GATEWAY_DOCS_ROOT' })]);
  });
});

function demoWith(root: string) {
  return { tenants: [{ id: 'acme', anonymous: true, sources: [{ id: 'docs', type: 'folder', root }] }] };
}
