/**
 * The deployed configuration of bench/hot-path.ts: tenants of the hot-path
 * fixture (a local ES256 issuer, `mcp:read` required) over three kinds of
 * source, the gateway's environment as a production operator sets it
 * (control plane on Postgres, the Redis store, a fixed SECRETS_KEY, access
 * lines at info, a metrics token), and the backends the sources read: a
 * fresh Postgres database of 150 tables and an s3rver bucket of 150 objects.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3rverHandle } from '@mcpgw/test-helpers/s3rver';
import type { TestDatabase } from '@mcpgw/test-helpers/postgres';
import type * as FixtureModule from './hot-path-fixture.js';

const { BENCH_AUDIENCE, catalogDescriptors } = (await import(
  new URL('./hot-path-fixture.ts', import.meta.url).href
)) as typeof FixtureModule;

/** Where a tenant's one source reads from. */
export type SourceKind = 'static' | 'postgres' | 's3';

export const ENTRIES = 150;
export const S3_BUCKET = 'bench-hot-path';

/**
 * A tenant's own limits as an operator sets them for a tenant whose callers
 * are expected at several thousand requests per second (the bench's one
 * client): the production defaults (RATE_LIMIT_TENANT_PER_MINUTE 60,000 and
 * RATE_LIMIT_PRINCIPAL_PER_MINUTE 6,000, 1,000 and 100 a second) would refuse
 * most of its requests. Limits stay on: every request is still counted, in Redis.
 */
export const OPERATOR_LIMITS = { requestsPerMinute: 3_000_000, perPrincipalPerMinute: 3_000_000 };

export interface TenantSpec {
  id: string;
  source: SourceKind;
  /** `0`: listings uncached. */
  listTtlMs?: number;
  /** `0`: reads uncached. */
  readTtlMs?: number;
  /** Postgres only: rows resources enabled, up to this many rows a read. */
  rowsMaxLimit?: number;
  /** Omitted: the production defaults apply (the rate-limit probe). */
  limits?: typeof OPERATOR_LIMITS;
}

export interface Backends {
  postgres: TestDatabase;
  /** Needed only by tenants with an S3 source. */
  s3?: S3rverHandle;
}

/** 150 tables with a primary key, a comment and 20 rows each, for the Postgres source. */
export async function seedPostgres(db: TestDatabase): Promise<void> {
  await db.sql(`
    DO $$ BEGIN
      FOR i IN 1..${ENTRIES} LOOP
        EXECUTE format('CREATE TABLE public.report_%s (id int PRIMARY KEY, title text)', lpad(i::text, 3, '0'));
        EXECUTE format('COMMENT ON TABLE public.report_%s IS %L', lpad(i::text, 3, '0'), 'Quarterly report ' || i);
        EXECUTE format('INSERT INTO public.report_%s SELECT g, ''row '' || g FROM generate_series(1, 20) g', lpad(i::text, 3, '0'));
      END LOOP;
    END $$;`);
  await db.sql('ANALYZE');
}

/** 150 Markdown objects of about 1 KiB, for the S3 source. */
export async function seedS3(s3: S3rverHandle): Promise<void> {
  await s3.createBucket(S3_BUCKET);
  const body = `# Report\n\n${'A line of the quarterly report.\n'.repeat(32)}`;
  for (let i = 0; i < ENTRIES; i += 1) {
    await s3.client.send(
      new PutObjectCommand({
        Bucket: S3_BUCKET,
        Key: `reports/${String(i).padStart(3, '0')}.md`,
        Body: body,
        ContentType: 'text/markdown',
      }),
    );
  }
}

function sourceOf(spec: TenantSpec, backends: Backends | undefined) {
  if (spec.source !== 'static' && backends === undefined)
    throw new Error(`tenant ${spec.id}: a ${spec.source} source needs its backend`);
  const ttlMs = {
    ...(spec.listTtlMs === undefined ? {} : { list: spec.listTtlMs }),
    ...(spec.readTtlMs === undefined ? {} : { read: spec.readTtlMs }),
  };
  const ttl = Object.keys(ttlMs).length === 0 ? {} : { ttlMs };
  switch (spec.source) {
    case 'static':
      return {
        id: 'docs',
        type: 'static',
        ...ttl,
        resources: catalogDescriptors.map((d, i) => ({ ...d, text: `# Report ${i}` })),
      };
    case 'postgres':
      return {
        id: 'docs',
        type: 'postgres',
        ...ttl,
        connection: { url: backends!.postgres.url },
        schemas: ['public'],
        ...(spec.rowsMaxLimit === undefined ? {} : { rows: { enabled: true, maxLimit: spec.rowsMaxLimit } }),
      };
    case 's3':
      if (backends!.s3 === undefined) throw new Error('an S3 tenant needs backends.s3');
      return {
        id: 'docs',
        type: 's3',
        ...ttl,
        endpoint: backends!.s3.endpoint,
        forcePathStyle: true,
        credentials: backends!.s3.credentials,
        bucket: S3_BUCKET,
        prefix: 'reports/',
      };
  }
}

/**
 * Writes the bootstrap file of `tenants` to a new directory and returns the
 * gateway's environment for it: the control plane on `controlPlaneUrl`, Redis
 * on `redisUrl`, one SECRETS_KEY for every replica of the run.
 */
export async function deployedGatewayEnv(options: {
  issuer: { issuer: string; jwksUri: string };
  tenants: readonly TenantSpec[];
  /** What postgres and s3 sources read; a run of static tenants only needs none. */
  backends?: Backends;
  controlPlaneUrl: string;
  redisUrl: string;
}): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-deployed-'));
  const document = {
    tenants: options.tenants.map((spec) => ({
      id: spec.id,
      auth: {
        issuers: [{ issuer: options.issuer.issuer, jwksUri: options.issuer.jwksUri, audiences: [BENCH_AUDIENCE] }],
        requiredScopes: ['mcp:read'],
      },
      grants: [{ name: 'readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'docs' }] }],
      ...(spec.limits === undefined ? {} : { limits: spec.limits }),
      sources: [sourceOf(spec, options.backends)],
    })),
  };
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(document));
  return {
    GATEWAY_CONFIG: join(dir, 'gateway.json'),
    DATA_DIR: dir,
    DATABASE_URL: options.controlPlaneUrl,
    REDIS_URL: options.redisUrl,
    SECRETS_KEY: randomBytes(24).toString('base64url'),
    METRICS_TOKEN: randomBytes(24).toString('base64url'),
    LOG_LEVEL: 'info',
  };
}
