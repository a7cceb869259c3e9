import { describe, expect, it } from 'vitest';
import { bearerChallenge } from '../src/bearer-challenge.js';
import { protectedResourceMetadata } from '../src/protected-resource-metadata.js';

const PRM = 'https://gw.example.com/.well-known/oauth-protected-resource/t/acme/mcp';

describe('bearerChallenge (RFC 6750 section 3, RFC 9728 section 5.1)', () => {
  it('a 401 without credentials: resource_metadata and scope, no error', () => {
    expect(bearerChallenge({ resourceMetadata: PRM, scope: 'mcp:read files:read' })).toBe(
      `Bearer resource_metadata="${PRM}", scope="mcp:read files:read"`,
    );
  });

  it('an invalid token: error and description', () => {
    expect(
      bearerChallenge({
        resourceMetadata: PRM,
        scope: 'mcp:read',
        error: 'invalid_token',
        errorDescription: 'The token has expired',
      }),
    ).toBe(
      `Bearer resource_metadata="${PRM}", scope="mcp:read", error="invalid_token", error_description="The token has expired"`,
    );
  });

  it('leaves out an empty scope', () => {
    expect(bearerChallenge({ resourceMetadata: PRM, scope: ' ', error: 'insufficient_scope' })).toBe(
      `Bearer resource_metadata="${PRM}", error="insufficient_scope"`,
    );
  });

  it('escapes quotes and backslashes and cannot be split by CR/LF', () => {
    const header = bearerChallenge({
      resourceMetadata: 'https://x/"a\\b',
      scope: 'a"b',
      error: 'invalid_request',
      errorDescription: 'bad "thing"\\\r\nSet-Cookie: x=1 é',
    });
    expect(header).toBe(
      'Bearer resource_metadata="https://x/\\"a\\\\b", scope="a\\"b", error="invalid_request", ' +
        `error_description="bad 'thing'/??Set-Cookie: x=1 ?"`,
    );
    expect(header).not.toMatch(/[\r\n]/);
  });
});

describe('protectedResourceMetadata (RFC 9728 section 2)', () => {
  it('lists the resource, its authorization servers, scopes and header-only bearer tokens', () => {
    expect(
      protectedResourceMetadata({
        resource: 'https://gw.example.com/t/acme/mcp',
        authorizationServers: ['https://idp.example.com/realms/acme'],
        scopesSupported: ['mcp:read', 'offline_access'],
        resourceName: 'Acme data',
      }),
    ).toEqual({
      resource: 'https://gw.example.com/t/acme/mcp',
      authorization_servers: ['https://idp.example.com/realms/acme'],
      scopes_supported: ['mcp:read'],
      bearer_methods_supported: ['header'],
      resource_name: 'Acme data',
    });
  });

  it('omits an empty scopes_supported and an absent name', () => {
    expect(protectedResourceMetadata({ resource: 'r', authorizationServers: ['a'], scopesSupported: [] })).toEqual({
      resource: 'r',
      authorization_servers: ['a'],
      bearer_methods_supported: ['header'],
    });
  });
});
