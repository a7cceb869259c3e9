import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Principal } from '@mcpgw/core';
import { createServerKeys } from '@mcpgw/core';
import { createTenantPrincipalFingerprint } from '../src/principal-fingerprint.js';

const keys = createServerKeys({ secretsKey: 'a-secrets-key-of-the-test-0123456789' });
const principal = (subject: string): Principal =>
  Object.freeze({ issuer: 'https://idp.example', subject, scopes: [], groups: [], expiresAt: 0 });
/** The fingerprint as the tenant's admins compute it: HMAC under the tenant's key of issuer and subject. */
const expected = (tenantId: string, p: Principal) =>
  createHmac('sha256', keys.tenantPrincipalFingerprint(tenantId))
    .update(`${p.issuer}\n${p.subject}`)
    .digest('base64url')
    .slice(0, 12);

describe('the tenant principal fingerprint', () => {
  it('is the tenant-keyed HMAC, the same for one Principal asked again, and another in another tenant', () => {
    const fingerprint = createTenantPrincipalFingerprint((id) => keys.tenantPrincipalFingerprint(id));
    const alice = principal('alice');
    const first = fingerprint('acme', alice);
    expect(first).toBe(expected('acme', alice));
    expect(fingerprint('acme', alice)).toBe(first);
    // The memo of one tenant never answers for another, even for the very same Principal object.
    expect(fingerprint('globex', alice)).toBe(expected('globex', alice));
    expect(fingerprint('globex', alice)).not.toBe(first);
    expect(fingerprint('acme', alice)).toBe(first);
    expect(fingerprint('acme', principal('bob'))).toBe(expected('acme', principal('bob')));
  });
});
