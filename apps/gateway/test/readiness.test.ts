import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { GatewayCache } from '@mcpgw/cache';
import type { Logger, Source, SourceFactory, SourceHealth } from '@mcpgw/core';
import type { TenantRuntime } from '@mcpgw/tenancy';
import { createHealthMonitor } from '@mcpgw/tenancy';
import { createSourceRegistry } from '../src/source-registry.js';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';

// Readiness is about this process, answered from what a background prober
// last saw: a request to /readyz reaches no backend, names no tenant or
// source, and one tenant's dead backend does not take the replica out.

/** A source type whose backend is gone; it counts its health probes. */
function deadSourceType(): { factory: SourceFactory; probes: () => number } {
  let probes = 0;
  const factory: SourceFactory = {
    type: 'dead-bucket',
    optionsSchema: { '~standard': { version: 1, vendor: 'test', validate: (value) => ({ value }) } },
    model: { credentials: [], targets: [], operatorOnly: false },
    create: (_options, context) =>
      fakeSource(context.sourceId, async () => {
        probes++;
        return { ok: false, detail: 'bucket does not exist' };
      }),
  };
  return { factory, probes: () => probes };
}

function fakeSource(id: string, health: () => Promise<SourceHealth>): Source {
  return {
    id,
    kind: 'dead-bucket',
    ttlMs: { list: 0, read: 0 },
    listResources: async () => ({ items: [] }),
    listTemplates: async () => [],
    owns: () => false,
    read: async () => undefined,
    health,
    close: async () => undefined,
  };
}

describe('/readyz on a listening gateway', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  let base: string;
  const dead = deadSourceType();

  beforeAll(async () => {
    const registry = new Map([...createSourceRegistry(), [dead.factory.type, dead.factory]]);
    ({ app, close } = await buildTestApp({
      registry,
      bootstrap: {
        configDir: '.',
        document: {
          tenants: [
            { id: 'healthy', anonymous: true, sources: [{ id: 'notes', type: 'static', resources: [] }] },
            { id: 'acme-corp', anonymous: true, sources: [{ id: 'secret-bucket', type: 'dead-bucket' }] },
          ],
        },
      },
    }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  });
  afterAll(() => close());

  it('is ready whatever one tenant’s backend does, names nobody, and probes no backend per request', async () => {
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${base}/readyz`);
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        status: 'ready',
        checks: { configuration: 'loaded', listening: true, cache: 'in-process' },
      });
      for (const name of ['acme-corp', 'secret-bucket', 'healthy', 'notes', 'bucket']) expect(text).not.toContain(name);
    }
    // The background prober's first round, at most: none of the 20 requests probed.
    expect(dead.probes()).toBeLessThanOrEqual(1);
  });
});

describe('the background health prober', () => {
  interface Line {
    level: string;
    obj: Record<string, unknown>;
    msg: string | undefined;
  }
  const lines: Line[] = [];
  const logger: Logger = {
    debug: (obj, msg) => lines.push({ level: 'debug', obj: obj as Record<string, unknown>, msg }),
    info: (obj, msg) => lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj: obj as Record<string, unknown>, msg }),
    child: () => logger,
  };

  it('logs a source’s health when it changes, not at every probe, and tracks Redis reachability', async () => {
    let ok = true;
    let redisUp = false;
    const source = fakeSource('bucket', async () => (ok ? { ok: true } : { ok: false, detail: 'no such bucket' }));
    const tenants = new Map([
      ['acme', { config: { id: 'acme' }, catalog: { sources: [source] } } as unknown as TenantRuntime],
    ]);
    const cache = { kind: 'redis', ready: async () => redisUp } as unknown as GatewayCache;
    const monitor = createHealthMonitor({ tenants, cache, logger });

    await monitor.probe();
    expect(lines).toEqual([]);
    expect(monitor.cache).toBe('unreachable');

    ok = false;
    redisUp = true;
    await monitor.probe();
    await monitor.probe();
    await monitor.probe();
    expect(lines).toEqual([
      {
        level: 'warn',
        obj: { tenant: 'acme', source: 'bucket', detail: 'no such bucket' },
        msg: expect.stringContaining('source unhealthy'),
      },
    ]);
    expect(monitor.cache).toBe('reachable');

    ok = true;
    await monitor.probe();
    await monitor.probe();
    expect(lines.slice(1)).toEqual([
      { level: 'info', obj: { tenant: 'acme', source: 'bucket', detail: undefined }, msg: 'source healthy again' },
    ]);
  });
});
