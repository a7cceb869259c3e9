import { describe, expect, it } from 'vitest';
import { createTenantRegistry } from '../src/tenant-registry.js';

/** A runtime that records when it closes; stands in for sources, auth and catalog. */
class FakeRuntime {
  closed = false;
  constructor(readonly label: string) {}
  async close(): Promise<void> {
    this.closed = true;
  }
}

describe('tenant registry', () => {
  it('serves the new runtime to new requests while a request holding the old one finishes on it', async () => {
    const registry = createTenantRegistry<FakeRuntime>();
    const first = new FakeRuntime('v1');
    await registry.apply('acme', async () => first, 1);
    const inFlight = registry.acquire('acme');
    expect(inFlight?.runtime).toBe(first);

    const second = new FakeRuntime('v2');
    expect(await registry.apply('acme', async () => second, 2)).toEqual({ ok: true });
    expect(registry.acquire('acme')?.runtime).toBe(second);
    expect(registry.serving.get('acme')).toBe(second);
    // The old runtime stays open while a request holds it, and closes when it is released.
    expect(first.closed).toBe(false);
    inFlight?.release();
    await Promise.resolve();
    expect(first.closed).toBe(true);
    expect(second.closed).toBe(false);
    expect(registry.status('acme')).toMatchObject({ servingRevision: 2 });
  });

  it('stops serving a tenant whose new revision cannot be built, never the previous runtime, and reports why', async () => {
    const registry = createTenantRegistry<FakeRuntime>();
    const good = new FakeRuntime('good');
    await registry.apply('acme', async () => good, 1);
    const outcome = await registry.apply(
      'acme',
      async () => {
        throw new Error('auth: the issuer entry is invalid');
      },
      2,
    );
    expect(outcome.ok).toBe(false);
    // The previous runtime holds what revision 2 changed (a revoked grant): it must not keep serving.
    expect(registry.serving.get('acme')).toBeUndefined();
    expect(registry.acquire('acme')).toBeUndefined();
    await Promise.resolve();
    expect(good.closed).toBe(true);
    expect(registry.status('acme')).toMatchObject({
      revision: 2,
      appliedRevision: 2,
      lastError: { message: 'auth: the issuer entry is invalid', revision: 2 },
    });
    expect(registry.status('acme')?.servingRevision).toBeUndefined();
    // A later good build serves again and clears the error.
    await registry.apply('acme', async () => new FakeRuntime('fixed'), 3);
    expect(registry.serving.get('acme')?.label).toBe('fixed');
    expect(registry.status('acme')?.lastError).toBeUndefined();
  });

  it('never applies a revision older than one already applied, whatever order the calls come in', async () => {
    const registry = createTenantRegistry<FakeRuntime>();
    await registry.apply('acme', async () => new FakeRuntime('v5'), 5);
    expect(await registry.apply('acme', async () => new FakeRuntime('v4'), 4)).toEqual({ ok: true, skipped: true });
    expect(await registry.apply('acme', async () => new FakeRuntime('v5 again'), 5)).toEqual({
      ok: true,
      skipped: true,
    });
    expect(registry.serving.get('acme')?.label).toBe('v5');
    expect(registry.status('acme')).toMatchObject({ revision: 5, appliedRevision: 5, servingRevision: 5 });
  });

  it('makes requests wait for a newer revision being built, and tells a writer once it is applied', async () => {
    const registry = createTenantRegistry<FakeRuntime>();
    await registry.apply('acme', async () => new FakeRuntime('v1'), 1);
    expect(registry.whenCurrent('acme')).toBeUndefined();
    let finish = (): void => undefined;
    const building = registry.apply(
      'acme',
      () => new Promise<FakeRuntime>((resolve) => (finish = () => resolve(new FakeRuntime('v2')))),
      2,
    );
    const applied = registry.whenApplied('acme', 2, 60_000);
    const current = registry.whenCurrent('acme');
    expect(current).toBeDefined();
    let waited = false;
    void current!.then(() => (waited = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(waited).toBe(false);
    finish();
    await building;
    await current;
    expect(registry.acquire('acme')?.runtime.label).toBe('v2');
    expect(await applied).toBe(true);
    expect(await registry.whenApplied('acme', 3, 10)).toBe(false);
  });

  it('applies changes of one tenant in call order even when an earlier build is slower', async () => {
    const registry = createTenantRegistry<FakeRuntime>();
    let releaseSlow = (): void => undefined;
    const slowStarted = new Promise<void>((started) => {
      void registry.apply(
        'acme',
        () =>
          new Promise<FakeRuntime>((resolve) => {
            releaseSlow = () => resolve(new FakeRuntime('slow'));
            started();
          }),
        1,
      );
    });
    const fast = registry.apply('acme', async () => new FakeRuntime('fast'), 2);
    await slowStarted;
    releaseSlow();
    await fast;
    expect(registry.serving.get('acme')?.label).toBe('fast');
  });

  it('removes a tenant: unknown to new requests, closed after its last request', async () => {
    const registry = createTenantRegistry<FakeRuntime>();
    const runtime = new FakeRuntime('v1');
    await registry.apply('acme', async () => runtime);
    const lease = registry.acquire('acme');
    await registry.remove('acme');
    expect(registry.acquire('acme')).toBeUndefined();
    expect(runtime.closed).toBe(false);
    lease?.release();
    lease?.release(); // a second release changes nothing
    await Promise.resolve();
    expect(runtime.closed).toBe(true);
  });

  it('closes every runtime on shutdown, waiting for requests still holding one', async () => {
    const registry = createTenantRegistry<FakeRuntime>();
    const a = new FakeRuntime('a');
    const b = new FakeRuntime('b');
    await registry.apply('a', async () => a);
    await registry.apply('b', async () => b);
    const lease = registry.acquire('b');
    let closed = false;
    const closing = registry.close().then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.closed).toBe(true);
    expect(closed).toBe(false);
    lease?.release();
    await closing;
    expect(b.closed).toBe(true);
  });

  it('reports a runtime that fails to close and still completes shutdown', async () => {
    const failures: string[] = [];
    const registry = createTenantRegistry<FakeRuntime>((tenantId) => failures.push(tenantId));
    await registry.apply(
      'acme',
      async () => ({ label: 'x', closed: false, close: () => Promise.reject(new Error('boom')) }) as FakeRuntime,
    );
    await registry.close();
    expect(failures).toEqual(['acme']);
  });
});
