import { describe, expect, it } from 'vitest';
import { databaseFailure, listenFailure, redactedUrl } from '../src/startup-failure.js';

// The one-line messages of a failed start, for the failures a test cannot easily provoke for real
// (a wrong password against a server that trusts loopback, a name with several addresses).
// test/integration/process-start-failures.test.ts runs the real ones through the built process.

const URL_WITH_PASSWORD = 'postgres://gateway:s3cret-pass@db.internal:5432/gateway';

describe('start-up failures', () => {
  it('names DATABASE_URL for each way the control plane cannot be reached, never its password', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { code: '28P01', message: 'password authentication failed for user "gateway"' },
        /: authentication failed \(password authentication failed for user "gateway"\)$/,
      ],
      [
        { code: '3D000', message: 'database "gateway" does not exist' },
        /: no such database \(database "gateway" does not exist\)$/,
      ],
      [{ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND db.internal' }, /: its host name does not resolve$/],
      [{ message: 'timeout exceeded when trying to connect' }, /: the server did not answer in time$/],
    ];
    for (const [error, reason] of cases) {
      const failure = databaseFailure(Object.assign(new Error(), error), URL_WITH_PASSWORD);
      expect(failure?.setting).toBe('DATABASE_URL');
      expect(failure?.message).toMatch(
        /^DATABASE_URL \(the control plane\) postgres:\/\/gateway:\*\*\*@db\.internal:5432\/gateway: /,
      );
      expect(failure?.message).toMatch(reason);
      expect(failure?.message).not.toContain('s3cret');
    }
    const refused = new AggregateError([
      Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' }),
    ]);
    expect(databaseFailure(refused, URL_WITH_PASSWORD)?.message).toMatch(/: connection refused/);
    // Not about reaching the database: left to say what it is.
    expect(
      databaseFailure(new Error('the database schema is newer than this gateway'), URL_WITH_PASSWORD),
    ).toBeUndefined();
  });

  it('names PORT or HOST for a listen that fails', () => {
    const failure = (code: string) => listenFailure(Object.assign(new Error(code), { code }), '10.1.2.3', 80);
    expect(failure('EADDRINUSE')?.message).toBe(
      'PORT 80 is in use on HOST 10.1.2.3: another process listens there; set PORT to a free port',
    );
    expect(failure('EACCES')?.setting).toBe('PORT');
    expect(failure('EADDRNOTAVAIL')?.message).toMatch(/^HOST 10\.1\.2\.3 is not an address of this machine/);
    expect(failure('EMFILE')).toBeUndefined();
  });

  it('redacts only the password of a connection string', () => {
    expect(redactedUrl('postgres://gw@db:5432/gw')).toBe('postgres://gw@db:5432/gw');
    expect(redactedUrl(URL_WITH_PASSWORD)).toBe('postgres://gateway:***@db.internal:5432/gateway');
  });
});
