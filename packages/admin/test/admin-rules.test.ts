import type { Principal } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { tenantOfAdminResource } from '../src/admin-resources.js';
import { writeOptions } from '../src/admin-views.js';
import { readPreconditions } from '../src/etag.js';
import { AdminProblem } from '../src/problem.js';
import { matchesBinding } from '../src/role-bindings.js';

// The small rules under the admin API: conditional headers (RFC 9110 section
// 13.1), which tenant an admin token's audience names, and role bindings.

const request = (headers: Record<string, string>) => ({ headers });
const problemType = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof AdminProblem) return `${error.status} ${error.type}`;
    throw error;
  }
  return undefined;
};

describe('conditional headers', () => {
  it('read a strong tag, a list, `*`, and make weak or foreign tags never match', () => {
    expect(readPreconditions(request({ 'if-match': '"7"' }))).toEqual({ ifVersion: 7 });
    expect(readPreconditions(request({ 'if-match': 'W/"7", "8"' }))).toEqual({ ifVersion: 8 });
    expect(readPreconditions(request({ 'if-match': 'W/"7"' }))).toEqual({ ifVersion: -1 });
    expect(readPreconditions(request({ 'if-match': '*' }))).toEqual({ mustExist: true });
    expect(readPreconditions(request({ 'if-none-match': '*' }))).toEqual({ create: true });
    expect(problemType(() => readPreconditions(request({ 'if-none-match': '"3"' })))).toBe('400 invalid-request');
  });

  it('need If-Match to change what exists, and nothing to create', () => {
    expect(writeOptions({}, undefined, 'x')).toEqual({ create: true });
    expect(problemType(() => writeOptions({}, { version: 2 }, 'x'))).toBe('428 precondition-required');
    expect(writeOptions({ ifVersion: 2 }, { version: 2 }, 'x')).toEqual({ ifVersion: 2 });
    expect(writeOptions({ mustExist: true }, { version: 5 }, 'x')).toEqual({ ifVersion: 5 });
    expect(problemType(() => writeOptions({ ifVersion: 2 }, undefined, 'x'))).toBe('412 precondition-failed');
    expect(problemType(() => writeOptions({ create: true }, { version: 1 }, 'x'))).toBe('412 precondition-failed');
  });
});

describe('admin audiences', () => {
  const bases = ['https://gw.example.com', 'http://localhost:8080'];
  it('name a tenant only under one of the gateway base URLs, as a slug', () => {
    expect(tenantOfAdminResource('https://gw.example.com/admin/v1/tenants/acme', bases)).toBe('acme');
    expect(tenantOfAdminResource('http://localhost:8080/admin/v1/tenants/acme', bases)).toBe('acme');
    expect(tenantOfAdminResource('https://evil.example/admin/v1/tenants/acme', bases)).toBeUndefined();
    expect(tenantOfAdminResource('https://gw.example.com/admin/v1/tenants/acme/x', bases)).toBeUndefined();
    expect(tenantOfAdminResource('https://gw.example.com/t/acme/mcp', bases)).toBeUndefined();
  });
});

describe('role bindings', () => {
  const principal: Principal = {
    issuer: 'https://idp',
    subject: 'alice',
    scopes: ['read', 'gw:admin'],
    groups: ['staff'],
    expiresAt: 0,
  };
  it('match any listed scope, group or subject, from the named issuer only', () => {
    expect(matchesBinding({ scopes: ['gw:admin'] }, principal, undefined)).toBe(true);
    expect(matchesBinding({ groups: ['ops', 'staff'] }, principal, undefined)).toBe(true);
    expect(matchesBinding({ subjects: ['alice'] }, principal, undefined)).toBe(true);
    expect(matchesBinding({ scopes: ['other'], groups: ['ops'] }, principal, undefined)).toBe(false);
    expect(matchesBinding({ issuer: 'https://other', scopes: ['gw:admin'] }, principal, undefined)).toBe(false);
    expect(matchesBinding({ issuer: 'development', subjects: ['alice'] }, principal, 'https://idp')).toBe(true);
    expect(matchesBinding({ issuer: 'https://idp' }, principal, undefined)).toBe(false);
  });
});
