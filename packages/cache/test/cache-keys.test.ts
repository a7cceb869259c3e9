import { createServerKeys } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { createCacheKeys } from '../src/cache-keys.js';

const secret = Buffer.from('k'.repeat(32));
const parts = {
  layer: 'result' as const,
  tenantId: 'acme',
  generation: 'g1',
  revision: 3,
  who: 'fingerprint-of-alice',
  method: 'resources/read',
  params: 'test://docs/salaries.txt',
};

describe('cache keys', () => {
  it('reveal no tenant, principal, method or URI, and share one Redis Cluster hash tag per tenant', () => {
    const keys = createCacheKeys({ key: secret });
    const entry = keys.entry(parts);
    for (const clear of ['acme', 'alice', 'fingerprint', 'resources', 'salaries', 'docs']) {
      expect(entry).not.toContain(clear);
    }
    const tag = /\{([^}]+)\}/.exec(entry)?.[1];
    expect(tag).toBe(keys.tenantTag('acme'));
    expect(keys.generation('acme')).toContain(`{${tag}}`);
    expect(keys.revisionFloor('acme')).toContain(`{${tag}}`);
    expect(entry.startsWith(keys.tenantPrefix('acme'))).toBe(true);
    expect(keys.lock(entry)).toContain(`{${tag}}`);
    expect(keys.tenantTag('globex')).not.toBe(tag);
  });

  it('differ when any part differs, and with another secret', () => {
    const keys = createCacheKeys({ key: secret });
    const base = keys.entry(parts);
    for (const change of [
      { layer: 'source' as const },
      { tenantId: 'globex' },
      { generation: 'g2' },
      // A runtime of another configuration revision never reaches this entry.
      { revision: 2 },
      { who: 'fingerprint-of-bob' },
      { method: 'resources/list' },
      { params: 'test://docs/other.txt' },
    ]) {
      expect(keys.entry({ ...parts, ...change })).not.toBe(base);
    }
    expect(createCacheKeys({ key: Buffer.from('j'.repeat(32)) }).entry(parts)).not.toBe(base);
    expect(createCacheKeys({ key: secret }).entry(parts)).toBe(base);
  });

  it('cannot be made to collide by moving a separator between parts', () => {
    const keys = createCacheKeys({ key: secret });
    expect(keys.entry({ ...parts, who: 'a|b', method: 'c' })).not.toBe(
      keys.entry({ ...parts, who: 'a', method: 'b|c' }),
    );
  });

  // Computed before the cache key was derived in @mcpgw/core, under this SECRETS_KEY: replicas of
  // both versions share Redis during a rolling upgrade, so they must name every entry alike.
  it('names entries as before under the same SECRETS_KEY', () => {
    const keys = createCacheKeys({
      key: createServerKeys({ secretsKey: 'a fixed SECRETS_KEY for key vectors, 32+ characters' }).cacheKey,
    });
    expect(keys.tenantTag('acme')).toBe('2a5f6c33dc7a57c8');
    expect(
      keys.entry({
        layer: 'result',
        tenantId: 'acme',
        generation: 'g1',
        revision: 3,
        who: 'fp',
        method: 'resources/list',
        params: { cursor: null },
      }),
    ).toBe('mcpgw:{2a5f6c33dc7a57c8}:e:mLdjM7EYcixEtJ0uA8lsV_Va7tBg4NZszXW53Wu7gfE');
    expect(keys.bodyMac('acme', 'body text')).toBe('yqBBRT4grcSX_NtnP400kEYEO2jjB3n64QJdIEMnq4Q');
  });
});
