import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// apps/gateway is the Fastify adapter and the process: routes, plugins, the composition root and
// the entry points. The tenancy, admin, events and protocol domains live in packages with public
// surfaces of their own (docs/architecture.md). This test keeps it so: a module of the app that
// needs no Fastify (neither imports it, nor imports an app module that does) must be one of the
// process pieces named below, and such modules stay at most a quarter of the app's lines.

const APP_SOURCES = fileURLToPath(new URL('../../apps/gateway/src/', import.meta.url));

/** The app modules that need no Fastify and still belong to the process, each with why. */
const PROCESS_PIECES: Readonly<Record<string, string>> = {
  'admin-cli.ts': 'entry point: `npm run admin`',
  'control-plane-cli.ts': 'entry point: `npm run control-plane`',
  'token-cli.ts': 'entry point: `npm run token`',
  'demo.ts': 'the built-in demo tenant `npm start` serves',
  'library-notices.ts': "process: holds oidc-provider's console notices until main.ts has a logger",
  'local-issuers.ts':
    'composition: the loopback issuers (demo login, local operator) `npm start` runs and `npm run token` signs for',
  'mcp-route.ts': 'the MCP route path, shared by the route and the observers that label by it',
  'process-warnings.ts': 'process: which Node warnings are printed',
  'running-gateway.ts': 'process: the record a running gateway leaves for `npm run token`',
  'serving-control-plane.ts': 'composition: the control plane main.ts opens and bootstraps',
  'source-registry.ts': 'composition: the source types this build ships',
  'tenant-identity-tokens.ts':
    "composition: the identity-token minter S3 sources get, over the tenants' hosted-server signing keys",
  'observability/cache-operations.ts': 'process: the cache counters the metrics endpoint scrapes',
  'observability/gateway-metrics.ts': 'process: the Prometheus registry of the metric contract',
  'observability/otlp-tracing.ts': 'process: the OTLP exporter main.ts starts',
  'plugins/loop-stall.ts': "the load-shedding plugin's event-loop clock",
};

const FRAMEWORK_IMPORT = /from '(?:fastify|fastify-plugin|@fastify\/[^']+|pino)'/;
const LOCAL_IMPORT = /from '(\.{1,2}\/[^']+)'/g;

function appModules(): Map<string, string> {
  const modules = new Map<string, string>();
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) modules.set(relative(APP_SOURCES, path), readFileSync(path, 'utf8'));
    }
  };
  walk(APP_SOURCES);
  return modules;
}

/** The modules that need Fastify: they import it (or pino), or import an app module that does. */
function needingFastify(modules: ReadonlyMap<string, string>): Set<string> {
  const needs = new Set([...modules].filter(([, text]) => FRAMEWORK_IMPORT.test(text)).map(([path]) => path));
  let grew = true;
  while (grew) {
    grew = false;
    for (const [path, text] of modules) {
      if (needs.has(path)) continue;
      const imports = [...text.matchAll(LOCAL_IMPORT)].map((match) =>
        normalize(join(dirname(path), (match[1] ?? '').replace(/\.js$/, '.ts'))),
      );
      if (imports.some((imported) => needs.has(imported))) {
        needs.add(path);
        grew = true;
      }
    }
  }
  return needs;
}

const lines = (text: string): number => text.split('\n').length - 1;

describe('apps/gateway holds the adapter and the process', () => {
  const modules = appModules();
  const needs = needingFastify(modules);
  const frameworkFree = [...modules.keys()].filter((path) => !needs.has(path));

  it('finds the app and tells Fastify modules from the others', () => {
    expect(needs).toContain('app.ts');
    expect(needs).toContain('routes/mcp.ts');
    // Through admin-route.ts, which types its handlers with Fastify's request and reply.
    expect(needs).toContain('admin/routes/entity-routes.ts');
    expect(frameworkFree).toContain('token-cli.ts');
  });

  it('has no framework-free module beyond the process pieces', () => {
    const unexpected = frameworkFree.filter((path) => PROCESS_PIECES[path] === undefined);
    expect(
      unexpected,
      'these need no Fastify: move them to the package that owns their domain (or name them here, with why)',
    ).toEqual([]);
  });

  it('names only process pieces that exist and still need no Fastify', () => {
    const stale = Object.keys(PROCESS_PIECES).filter((path) => !frameworkFree.includes(path));
    expect(stale, 'gone or now Fastify-bound: drop them from PROCESS_PIECES').toEqual([]);
  });

  it('keeps framework-free code to at most a quarter of its lines', () => {
    const total = [...modules.values()].reduce((sum, text) => sum + lines(text), 0);
    const free = frameworkFree.reduce((sum, path) => sum + lines(modules.get(path) ?? ''), 0);
    expect(free / total).toBeLessThanOrEqual(0.25);
  });
});
