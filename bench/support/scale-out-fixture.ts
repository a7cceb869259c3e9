/**
 * The deployment the scale-out benchmarks measure: a private Postgres
 * (control plane database `control`, tenant database `source` with 100
 * commented tables and a 1,000-row `orders`), a private Redis, a local ES256
 * issuer, and a bootstrap file of four tenants: `st` and `st0` (the hot
 * path's 150-resource static catalog, cached and at `ttlMs` 0) and `pg` and
 * `pg0` (a postgres source over `source`, rows enabled, polled for changes
 * every second while someone listens; cached and at `ttlMs` 0). The gateway
 * environment is production's: control plane on Postgres, REDIS_URL, the
 * three MCP rate limits on (set high enough to count every request and
 * refuse none), an operator issuer for the admin API, access lines at
 * `info`, one PUBLIC_URL for every replica.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startLocalIssuer, type LocalIssuer } from '@mcpgw/test-helpers/local-issuer';
import { startRedisServer, type OwnRedisServer } from '@mcpgw/test-helpers/redis';
import type * as StackModule from './scale-out-stack.js';

const { startPrivatePostgres } = (await import(
  new URL('./scale-out-stack.ts', import.meta.url).href
)) as typeof StackModule;

/** The name every replica answers to (clients send it as Host; tokens name it in `aud`). */
export const PUBLIC_HOST = 'mcp.bench.example';
export const PUBLIC_URL = `https://${PUBLIC_HOST}`;
export const TABLES = 100;
export const ORDER_ROWS = 1000;

export interface ScaleOutFixture {
  postgres: StackModule.PrivatePostgres;
  redis: OwnRedisServer;
  issuer: LocalIssuer;
  /** The gateway's environment (every replica the same). */
  env: Record<string, string>;
  /** A caller's bearer token for a tenant (valid an hour). */
  token(tenant: string): Promise<string>;
  /** An operator's bearer token for the admin API. */
  operatorToken(): Promise<string>;
  /** Runs SQL in the tenant database. */
  sourceSql(text: string): Promise<void>;
  close(): Promise<void>;
}

const catalog = Array.from({ length: 150 }, (_, i) => ({
  uri: `test://docs/reports/${String(i).padStart(3, '0')}.md`,
  name: `report-${i}`,
  title: `Quarterly report ${i}`,
  description: 'A static fixture resource of the benchmark',
  mimeType: 'text/markdown',
  text: `# Report ${i}`,
}));

export async function startScaleOutFixture(options: { pin?: string } = {}): Promise<ScaleOutFixture> {
  const postgres = await startPrivatePostgres(options.pin);
  const redis = await startRedisServer();
  const issuer = await startLocalIssuer({ path: '/bench-idp' });
  const admin = new pg.Client({ connectionString: postgres.url('postgres') });
  await admin.connect();
  await admin.query('CREATE DATABASE control');
  await admin.query('CREATE DATABASE source');
  await admin.end();
  const source = new pg.Client({ connectionString: postgres.url('source') });
  await source.connect();
  const ddl: string[] = [];
  for (let i = 0; i < TABLES; i += 1) {
    const name = `t${String(i).padStart(3, '0')}`;
    ddl.push(
      `CREATE TABLE public.${name} (id int PRIMARY KEY, label text NOT NULL, created timestamptz DEFAULT now())`,
    );
    ddl.push(`COMMENT ON TABLE public.${name} IS 'Table ${i} of the benchmark'`);
  }
  ddl.push('CREATE TABLE public.orders (id int PRIMARY KEY, customer text NOT NULL, total numeric(10,2) NOT NULL)');
  ddl.push(
    `INSERT INTO public.orders SELECT g, 'customer ' || g, (g * 7 % 1000) / 10.0 FROM generate_series(1, ${ORDER_ROWS}) g`,
  );
  await source.query(ddl.join(';\n'));
  await source.query('ANALYZE');

  const dir = await mkdtemp(join(tmpdir(), 'bench-scale-out-'));
  const auth = { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }], requiredScopes: ['mcp:read'] };
  const grants = [{ name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }, { source: 'db' }] }];
  const uncached = { ttlMs: { list: 0, read: 0 } };
  const staticSource = (ttl: object) => ({ id: 'docs', type: 'static', ...ttl, resources: catalog });
  const postgresSource = (ttl: object) => ({
    id: 'db',
    type: 'postgres',
    connection: { url: postgres.url('source') },
    schemas: ['public'],
    rows: { enabled: true, maxLimit: ORDER_ROWS },
    changeDetection: { mode: 'poll', pollIntervalMs: 1000 },
    ...ttl,
  });
  const tenant = (id: string, sources: object[]) => ({
    id,
    auth,
    grants: [{ ...grants[0]!, allow: sources.map((s) => ({ source: (s as { id: string }).id })) }],
    sources,
  });
  await writeFile(
    join(dir, 'gateway.json'),
    JSON.stringify({
      tenants: [
        tenant('st', [staticSource({})]),
        tenant('st0', [staticSource(uncached)]),
        tenant('pg', [postgresSource({})]),
        tenant('pg0', [postgresSource(uncached)]),
      ],
    }),
  );
  const high = '100000000';
  const env = {
    GATEWAY_CONFIG: join(dir, 'gateway.json'),
    DATA_DIR: dir,
    DATABASE_URL: postgres.url('control'),
    REDIS_URL: redis.url,
    PUBLIC_URL,
    SECRETS_KEY: randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'info',
    RATE_LIMIT_IP_PER_MINUTE: high,
    RATE_LIMIT_TENANT_PER_MINUTE: high,
    RATE_LIMIT_PRINCIPAL_PER_MINUTE: high,
    RATE_LIMIT_ADMIN_IP_PER_MINUTE: high,
    RATE_LIMIT_ADMIN_PER_MINUTE: high,
    OPERATOR_ISSUER: issuer.issuer,
    OPERATOR_JWKS_URI: issuer.jwksUri,
    EGRESS_ALLOW: '127.0.0.1/32',
  };
  const hour = () => Math.floor(Date.now() / 1000) + 3600;
  return {
    postgres,
    redis,
    issuer,
    env,
    token: (id) =>
      issuer.token({ aud: `${PUBLIC_URL}/t/${id}/mcp`, scope: 'mcp:read', sub: 'bench-caller', exp: hour() }),
    operatorToken: () =>
      issuer.token({ aud: `${PUBLIC_URL}/admin/v1`, sub: 'bench-operator', roles: ['gateway-operator'], exp: hour() }),
    async sourceSql(text) {
      await source.query(text);
    },
    async close() {
      await source.end().catch(() => undefined);
      await issuer.close();
      await redis.close();
      await postgres.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
