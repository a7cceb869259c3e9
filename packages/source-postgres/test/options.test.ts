import { describe, expect, it } from 'vitest';
import { connectionConfig } from '../src/connection-config.js';
import { postgresSourceFactory } from '../src/postgres-source-factory.js';
import { postgresSourceOptionsSchema } from '../src/postgres-source-options.js';

describe('postgres source options', () => {
  it('applies the documented defaults', () => {
    expect(
      postgresSourceOptionsSchema.parse({ connection: { url: 'postgres://u@h/db' }, schemas: ['public'] }),
    ).toEqual({
      connection: { url: 'postgres://u@h/db' },
      schemas: ['public'],
      pool: { max: 4, connectionTimeoutMs: 1500 },
      statementTimeoutMs: 5000,
      lockTimeoutMs: 1000,
      rows: { enabled: false, maxLimit: 100, columns: { exclude: [] } },
      changeDetection: { mode: 'poll', pollIntervalMs: 30_000 },
    });
    expect(
      postgresSourceOptionsSchema.parse({
        connection: { host: 'db', database: 'crm', user: 'reader', password: 's3cret' },
        schemas: ['public'],
      }).connection,
    ).toEqual({ host: 'db', port: 5432, database: 'crm', user: 'reader', password: 's3cret' });
  });

  it("puts a URL connection's separate password into the URL, whatever its characters", () => {
    const password = 'p@ss w%rd/x:?#&=+é';
    const config = (url: string) =>
      connectionConfig(postgresSourceOptionsSchema.parse({ connection: { url, password }, schemas: ['public'] }), 's');
    // pg-connection-string decodes the userinfo password with decodeURIComponent; a password query
    // parameter would win over it, so the URL's own is dropped.
    const withHost = new URL(config('postgres://u:old@h:5/db?sslmode=require&password=older').connectionString!);
    expect(decodeURIComponent(withHost.password)).toBe(password);
    expect(withHost.searchParams.has('password')).toBe(false);
    expect([withHost.hostname, withHost.port, withHost.searchParams.get('sslmode')]).toEqual(['h', '5', 'require']);
    // A URL without a host (a Unix socket) cannot hold userinfo: libpq's query parameter carries it.
    const socket = new URL(config('postgres:///db?host=/run/postgresql').connectionString!);
    expect(socket.searchParams.get('password')).toBe(password);
    expect(config('postgres://u@h/db').connectionString).toBe('postgres://u:' + encodeURIComponent(password) + '@h/db');
  });

  it('is strict: typos and unknown keys fail, at every level', () => {
    const base = { connection: { url: 'postgres://u@h/db' }, schemas: ['public'] };
    for (const bad of [
      { ...base, schema: ['public'] },
      { ...base, pool: { maxx: 4 } },
      { ...base, rows: { enable: true } },
      { ...base, changeDetection: { mode: 'trigger' } },
      { ...base, connection: { url: 'postgres://u@h/db', host: 'h' } },
      { ...base, connection: { host: 'h', database: 'd', user: 'u', passwd: 'x' } },
    ]) {
      expect(postgresSourceOptionsSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('requires a non-empty allowlist without system schemas or repeats', () => {
    const conn = { connection: { url: 'postgres://u@h/db' } };
    for (const schemas of [
      [],
      ['pg_catalog'],
      ['information_schema'],
      ['pg_toast'],
      ['public', 'public'],
      [''],
      ['x'.repeat(64)],
    ]) {
      expect(postgresSourceOptionsSchema.safeParse({ ...conn, schemas }).success, JSON.stringify(schemas)).toBe(false);
    }
  });

  it('never echoes a connection string in its errors', () => {
    const secret = 'mysql://admin:hunter2@db.internal/x';
    const result = postgresSourceOptionsSchema.safeParse({ connection: { url: secret }, schemas: ['public'] });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).not.toContain('hunter2');
    expect(JSON.stringify(result.error?.issues)).not.toContain('db.internal');
  });

  it('is exposed through the factory as type "postgres" (Standard Schema)', async () => {
    expect(postgresSourceFactory.type).toBe('postgres');
    const result = await postgresSourceFactory.optionsSchema['~standard'].validate({
      connection: { url: 'x' },
      schemas: ['p'],
    });
    expect('issues' in result && result.issues?.[0]?.path).toEqual(['connection', 'url']);
  });
});
