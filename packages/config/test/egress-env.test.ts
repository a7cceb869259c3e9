import { describe, expect, it } from 'vitest';
import { readEnv } from '../src/env.js';

// EGRESS_ALLOW: the operator's allowlist of internal destinations tenant
// admins may configure (docs/configuration.md, "Egress policy").

describe('EGRESS_ALLOW', () => {
  it('is empty by default: nothing internal is allowed', () => {
    expect(readEnv({}).EGRESS_ALLOW).toEqual([]);
  });

  it('takes comma-separated CIDRs, addresses and host names', () => {
    expect(readEnv({ EGRESS_ALLOW: ' 10.20.0.0/16, 127.0.0.1,fd00::/8 ,minio.internal,' }).EGRESS_ALLOW).toEqual([
      '10.20.0.0/16',
      '127.0.0.1',
      'fd00::/8',
      'minio.internal',
    ]);
  });

  it('names the bad entry', () => {
    expect(() => readEnv({ EGRESS_ALLOW: '10.0.0.0/8,10.0.0.0/33,http://minio' })).toThrow(
      expect.objectContaining({
        issues: [
          expect.objectContaining({ path: 'env.EGRESS_ALLOW[1]', message: expect.stringContaining('10.0.0.0/33') }),
          expect.objectContaining({ path: 'env.EGRESS_ALLOW[2]', message: expect.stringContaining('http://minio') }),
        ],
      }),
    );
  });
});
