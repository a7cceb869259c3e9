import { describe, expect, it } from 'vitest';
import type { StoredTenantModel } from '@mcpgw/control-plane';
import { declaredTenantFromEntry, storedTenantOfDeclared } from '@mcpgw/control-plane';
import type { TenantConfig } from '@mcpgw/config';
import type { SourceFactory } from '@mcpgw/core';
import type { StoredPlacement } from '../src/tenant-runtime.js';
import { runtimeOfStoredTenant } from '../src/control-plane/stored-tenant-runtime.js';

const vault = {
  type: 'vault',
  model: { credentials: ['credentials.token'], targets: ['endpoint'], operatorOnly: false },
} as unknown as SourceFactory;
const sourceFactories = new Map([['vault', vault]]);

/** Records what it is given instead of building: the served entry, and the placement. */
function recording() {
  const seen: { entry?: unknown; placement?: StoredPlacement } = {};
  return {
    seen,
    deps: {
      sourceFactories,
      validate: (entry: unknown) => {
        seen.entry = entry;
        return Promise.resolve({ id: 'acme' } as TenantConfig);
      },
      build: (_tenant: TenantConfig, placement: StoredPlacement) => {
        seen.placement = placement;
        return Promise.resolve('the runtime');
      },
    },
  };
}

describe('the one function from a stored tenant to its runtime', () => {
  it('serves the stored tenant with its credentials merged in, at its revision, holding what tenant admins wrote to the egress policy', async () => {
    const stored: StoredTenantModel = {
      id: 'acme',
      status: 'active',
      revision: 7,
      settings: { name: 'Acme' },
      issuers: [{ name: 'https://idp.example', document: { issuer: 'https://idp.example' }, writtenBy: 'operator' }],
      sources: [
        {
          name: 'vault',
          document: { type: 'vault', endpoint: 'https://vault.example' },
          writtenBy: 'tenant-admin',
          secrets: { 'credentials.token': 'sealed', stray: 'never served' },
        },
      ],
      grants: [],
      adminRoleBindings: [],
    };
    const { seen, deps } = recording();
    await expect(runtimeOfStoredTenant(stored, deps)).resolves.toBe('the runtime');
    expect(seen.entry).toEqual({
      name: 'Acme',
      id: 'acme',
      grants: [],
      sources: [{ id: 'vault', type: 'vault', endpoint: 'https://vault.example', credentials: { token: 'sealed' } }],
      adminRoleBindings: [],
      auth: { issuers: [{ issuer: 'https://idp.example' }] },
    });
    expect(seen.placement?.revision).toBe(7);
    expect([...(seen.placement?.tenantAdminWrites?.sources ?? [])]).toEqual(['vault']);
    expect([...(seen.placement?.tenantAdminWrites?.issuers ?? [])]).toEqual([]);
  });

  it("serves a bootstrap file's tenant through the same function: as written, every part an operator's", async () => {
    const entry = {
      id: 'acme',
      anonymous: true,
      sources: [{ id: 'vault', type: 'vault', endpoint: { $env: 'VAULT_URL' } }],
    };
    const { seen, deps } = recording();
    await runtimeOfStoredTenant(storedTenantOfDeclared(declaredTenantFromEntry(entry)), deps);
    expect(seen.entry).toEqual({
      anonymous: true,
      id: 'acme',
      grants: [],
      sources: [{ id: 'vault', type: 'vault', endpoint: { $env: 'VAULT_URL' } }],
      adminRoleBindings: [],
    });
    expect(seen.placement?.revision).toBe(0);
    expect(seen.placement?.tenantAdminWrites?.sources.size).toBe(0);
  });
});
