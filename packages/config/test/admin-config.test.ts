import { describe, expect, it } from 'vitest';
import { adminRoleBindingSchema } from '../src/admin-role-binding-schema.js';
import { issuerSchema } from '../src/auth-schema.js';
import { bootstrapSchema } from '../src/bootstrap-schema.js';
import { ConfigError } from '../src/config-error.js';
import { readEnv } from '../src/env.js';

// The configuration the admin API relies on: admin role bindings (stored
// documents and the bootstrap file's key), the operator settings, and URL
// fields that must refuse junk with an issue, never a thrown TypeError.

const tenant = (bindings: unknown) => ({
  tenants: [{ id: 'acme', anonymous: true, sources: [{ id: 's', type: 'x' }], adminRoleBindings: bindings }],
});

describe('admin role bindings', () => {
  it('accept scopes, groups or subjects, optionally narrowed to one issuer', () => {
    expect(adminRoleBindingSchema.safeParse({ groups: ['admins'] }).success).toBe(true);
    expect(adminRoleBindingSchema.safeParse({ issuer: 'https://idp', subjects: ['alice'] }).success).toBe(true);
  });

  it('refuse a binding that would match everyone, or unknown keys', () => {
    const empty = adminRoleBindingSchema.safeParse({ issuer: 'https://idp' });
    expect(empty.error?.issues.map((issue) => issue.path)).toEqual([['scopes']]);
    expect(adminRoleBindingSchema.safeParse({ scopes: [] }).success).toBe(false);
    expect(adminRoleBindingSchema.safeParse({ scopes: ['a'], role: 'x' }).success).toBe(false);
  });

  it('are a tenant key of the bootstrap file, with unique names', () => {
    expect(bootstrapSchema.safeParse(tenant([{ name: 'a', scopes: ['admin'] }])).success).toBe(true);
    const twice = bootstrapSchema.safeParse(
      tenant([
        { name: 'a', scopes: ['x'] },
        { name: 'a', groups: ['y'] },
      ]),
    );
    expect(twice.error?.issues.map((issue) => issue.path)).toEqual([['tenants', 0, 'adminRoleBindings']]);
  });
});

describe('operator settings and URL fields', () => {
  it('default the role claim and role, and need an absolute audience', () => {
    const env = readEnv({ OPERATOR_ISSUER: 'https://ops.example.com' });
    expect([env.OPERATOR_ROLE_CLAIM, env.OPERATOR_ROLE, env.OPERATOR_AUDIENCE]).toEqual([
      'roles',
      'gateway-operator',
      undefined,
    ]);
    expect(() => readEnv({ OPERATOR_AUDIENCE: 'gateway-admin' })).toThrow(ConfigError);
  });

  it('refuse an unparseable URL with an issue instead of throwing from a refinement', () => {
    expect(issuerSchema.safeParse({ issuer: '', jwksUri: 'https://idp/jwks' }).success).toBe(false);
    expect(() => readEnv({ PUBLIC_URL: 'not a url' })).toThrow(ConfigError);
  });
});
