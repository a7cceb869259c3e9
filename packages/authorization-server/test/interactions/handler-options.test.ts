import { randomBytes } from 'node:crypto';
import { silentLogger } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { csrfTokenFor, isCsrfTokenValid } from '../../src/interactions/csrf-token.js';
import type { InteractionPagesOptions } from '../../src/interactions/interaction-handler.js';
import { createInteractionPages } from '../../src/interactions/interaction-handler.js';
import { interactionRouteOf } from '../../src/interactions/interaction-route.js';
import { MapConsentMemory } from './interaction-fixture.js';

const options = (overrides: Partial<InteractionPagesOptions>): InteractionPagesOptions => ({
  tenant: { id: 'acme', displayName: 'Acme' },
  issuer: 'http://127.0.0.1:8080/t/acme/oauth',
  login: { kind: 'demo', accountId: 'demo-user', userName: 'Demo User' },
  consentMemory: new MapConsentMemory(),
  csrfKey: randomBytes(32),
  logger: silentLogger,
  ...overrides,
});

describe('createInteractionPages', () => {
  it('refuses the demo login on an issuer that is not on a loopback address', () => {
    expect(() => createInteractionPages(options({ issuer: 'https://gw.example/t/acme/oauth' }))).toThrow(
      /demo login signs in every visitor, so it runs only on a loopback issuer/,
    );
    for (const issuer of [
      'http://localhost:8080/t/a/oauth',
      'http://[::1]:8080/t/a/oauth',
      'http://127.1.2.3/t/a/oauth',
    ]) {
      expect(() => createInteractionPages(options({ issuer }))).not.toThrow();
    }
  });

  it('refuses a CSRF key shorter than 32 bytes', () => {
    expect(() => createInteractionPages(options({ csrfKey: randomBytes(16) }))).toThrow(/at least 32 bytes/);
  });
});

describe('the CSRF token', () => {
  it('is valid for its own interaction under its own key only', () => {
    const key = randomBytes(32);
    const token = csrfTokenFor(key, 'uid-1');
    expect(isCsrfTokenValid(key, 'uid-1', token)).toBe(true);
    expect(isCsrfTokenValid(key, 'uid-2', token)).toBe(false);
    expect(isCsrfTokenValid(randomBytes(32), 'uid-1', token)).toBe(false);
    expect(isCsrfTokenValid(key, 'uid-1', undefined)).toBe(false);
    expect(isCsrfTokenValid(key, 'uid-1', `${token}x`)).toBe(false);
  });
});

describe('interactionRouteOf', () => {
  it('knows the interaction and callback paths and nothing else', () => {
    expect(interactionRouteOf('/interaction/Ab_-9')).toEqual({ kind: 'interaction', uid: 'Ab_-9' });
    expect(interactionRouteOf('/callback')).toEqual({ kind: 'callback' });
    for (const path of ['/interaction/', '/interaction/a/b', '/interaction/a%2F', '/auth', '/callback/x', '/token']) {
      expect(interactionRouteOf(path)).toBeUndefined();
    }
  });
});
