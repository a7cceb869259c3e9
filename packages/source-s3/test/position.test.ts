import { isGatewayError } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { decodePosition, encodePosition } from '../src/position.js';

describe('S3 listing positions', () => {
  it('round-trip any key', () => {
    for (const key of ['a', 'dir/', 'ü ber/€ x.bin', '🎉/x', 'x'.repeat(1024)]) {
      expect(decodePosition(encodePosition(key))).toBe(key);
    }
  });

  it('refuse anything they did not produce with MCPGW_CURSOR_INVALID', () => {
    const bad = [
      '',
      'v1:',
      'v2:YQ',
      'YQ',
      'v1:YQ==', // padding is not our spelling
      'v1:YR', // trailing bits set: another spelling of "a"
      'v1:!!',
      `v1:${Buffer.from([0xff, 0xfe]).toString('base64url')}`, // not UTF-8
      `v1:${Buffer.alloc(1025, 0x61).toString('base64url')}`, // longer than any S3 key
    ];
    for (const position of bad) {
      let caught: unknown;
      try {
        decodePosition(position);
      } catch (error) {
        caught = error;
      }
      expect(isGatewayError(caught) && caught.code, position).toBe('MCPGW_CURSOR_INVALID');
    }
  });
});
