import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@mcpgw/config';
import { createSourceRegistry, demoBootstrap } from '@mcpgw/gateway/testing';

// Grant URI patterns that no URI of their source could ever match are refused
// at load, with the grant's path and the reason, using the real source types'
// URI shapes; the configurations the repository ships still load.

const sources = [
  { id: 'docs', type: 'files', root: '.' },
  { id: 'crm', type: 'postgres', connection: { url: 'postgres://reader@127.0.0.1:5432/crm' }, schemas: ['public'] },
  { id: 'reports', type: 's3', bucket: 'acme-reports' },
  {
    id: 'fixtures',
    type: 'static',
    resources: [{ uri: 'test://hello', name: 'hello', text: 'hi' }],
    templates: [{ uriTemplate: 'test://items/{id}', name: 'item', text: '{{id}}' }],
  },
];

async function load(uris: Record<string, string[]>, configPath?: string) {
  let path = configPath;
  if (path === undefined) {
    const dir = await mkdtemp(join(tmpdir(), 'gw-grant-patterns-'));
    path = join(dir, 'gateway.json');
    await writeFile(
      path,
      JSON.stringify({
        tenants: [
          {
            id: 'acme',
            auth: { issuers: [{ development: true }] },
            grants: [
              {
                name: 'staff',
                match: {},
                allow: Object.entries(uris).map(([source, patterns]) => ({ source, uris: patterns })),
              },
            ],
            sources,
          },
        ],
      }),
    );
  }
  return loadConfig({
    registry: createSourceRegistry(),
    defaultBootstrap: demoBootstrap(),
    env: { GATEWAY_CONFIG: path },
  });
}

async function issues(uris: Record<string, string[]>) {
  const error = await load(uris).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).issues;
}

describe('grant URI patterns at load', () => {
  it('accepts patterns that fit each source type', async () => {
    const config = await load({
      docs: ['file:///docs/**', 'file:///docs/eng/*.md'],
      crm: ['db+postgres:///crm/public/*', 'db+postgres:///crm/public/orders/rows?**'],
      reports: ['s3:///reports/2024//raw/**'],
      fixtures: ['test://hello', 'test://items/*'],
    });
    expect(config.tenants[0]?.grants[0]?.allow).toHaveLength(4);
  });

  it('refuses each pattern that can never match, naming the grant path and the reason', async () => {
    const found = await issues({
      docs: ['file://docs/eng/**', 'file:///docs//eng/**', 'file:///handbook/**'],
      crm: ['postgres:///crm/public/*'],
      reports: ['s3:///sales/**'],
      fixtures: ['test://other/**'],
    });
    const at = 'tenants[0].grants[0]';
    expect(found).toEqual([
      {
        path: `${at}.allow[0].uris[0]`,
        message: expect.stringMatching(/^'file:\/\/docs\/eng\/\*\*' can never match: it has the authority 'docs'/),
      },
      { path: `${at}.allow[0].uris[1]`, message: expect.stringContaining("empty path segment ('//')") },
      {
        path: `${at}.allow[0].uris[2]`,
        message: expect.stringContaining("it names 'handbook', not this grant's source 'docs'"),
      },
      { path: `${at}.allow[1].uris[0]`, message: expect.stringContaining("its scheme is 'postgres:'") },
      { path: `${at}.allow[2].uris[0]`, message: expect.stringContaining("it names 'sales'") },
      { path: `${at}.allow[3].uris[0]`, message: expect.stringContaining('test://hello, test://items/') },
    ]);
  });

  it('still loads the built-in demo and the conformance configuration', async () => {
    const demo = await loadConfig({ registry: createSourceRegistry(), defaultBootstrap: demoBootstrap(), env: {} });
    expect(demo.tenants.length).toBeGreaterThan(0);
    const conformance = new URL('../conformance/gateway.config.json', import.meta.url).pathname;
    await expect(load({}, conformance).then(() => 'loaded')).resolves.toBe('loaded');
  });
});
