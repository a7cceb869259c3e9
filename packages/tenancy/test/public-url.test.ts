import { describe, expect, it } from 'vitest';
import type { EnvConfig } from '@mcpgw/config';
import { publicBaseUrl } from '../src/public-url.js';

const env = (values: Partial<EnvConfig>) => ({ HOST: '127.0.0.1', PORT: 8080, ...values }) as EnvConfig;

describe('publicBaseUrl', () => {
  it('is PUBLIC_URL when set, whatever the bound port', () => {
    expect(publicBaseUrl(env({ PUBLIC_URL: 'https://gw.example' }), 4321)).toBe('https://gw.example');
  });

  it('names the bound port (PORT=0 binds a free one) and brackets an IPv6 host once', () => {
    expect(publicBaseUrl(env({ PORT: 0 }), 4321)).toBe('http://127.0.0.1:4321');
    expect(publicBaseUrl(env({ HOST: '::1' }))).toBe('http://[::1]:8080');
    expect(publicBaseUrl(env({ HOST: '[::1]' }), 4321)).toBe('http://[::1]:4321');
  });
});
