/** The policy functions alone: the trust policy's matching, and the expiry of unused registrations. */
import { describe, expect, it } from 'vitest';
import { metadataDocumentTrust, sweepUnusedClients, unusedClientCutoff } from '../../src/index.js';
import { clientPolicy, memoryRegisteredClients } from './harness.js';

const DAY = 24 * 3600 * 1000;

describe('the metadata document trust policy', () => {
  it('open admits any client, off none', () => {
    expect(metadataDocumentTrust('open')('https://anyone.example/client.json')).toBeUndefined();
    expect(metadataDocumentTrust('off')('https://anyone.example/client.json')).toMatch(/does not accept/);
  });

  it('an allowlist matches URLs as strings, hosts exactly, and presets by their hosts', () => {
    const { metadataDocuments } = clientPolicy({
      metadataDocuments: { allow: ['https://app.example/oauth/client.json', 'tools.example', 'claude'] },
    });
    const trust = metadataDocumentTrust(metadataDocuments);
    expect(trust('https://app.example/oauth/client.json')).toBeUndefined();
    expect(trust('https://tools.example/any/client.json')).toBeUndefined();
    expect(trust('https://claude.ai/oauth/mcp-oauth-client-metadata')).toBeUndefined();
    expect(trust('https://claude.com/oauth/mcp-oauth-client-metadata')).toBeUndefined();
    for (const refused of [
      'https://app.example/oauth/other.json',
      'https://app.example/oauth/client.json?x=1',
      'https://sub.tools.example/client.json',
      'https://tools.example.evil.test/client.json',
      'https://evilclaude.ai/client.json',
    ]) {
      expect(trust(refused), refused).toMatch(/not among the clients/);
    }
  });
});

describe('the expiry of unused registrations', () => {
  it('deletes the clients unused for unusedExpiryDays, and only those', async () => {
    const policy = clientPolicy({ registration: { unusedExpiryDays: 30 } }).registration;
    const now = Date.parse('2030-01-31T00:00:00Z');
    expect(unusedClientCutoff(policy, now).toISOString()).toBe('2030-01-01T00:00:00.000Z');
    const store = memoryRegisteredClients();
    store.used.set('stale', new Date(now - 31 * DAY));
    store.used.set('recent', new Date(now - 29 * DAY));
    expect(await sweepUnusedClients(policy, store, now)).toBe(1);
    expect([...store.used.keys()]).toEqual(['recent']);
  });
});
