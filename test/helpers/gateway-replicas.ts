import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SourceFactory, silentLogger } from '@mcpgw/core';
import { createRedisTenantEventBus, createSourceRegistry, type RedisTenantEventBus } from '@mcpgw/gateway/testing';
import { type StartedGateway, startGateway } from './gateway.js';
import { type LocalIssuer, startLocalIssuer } from './local-issuer.js';
import { type TestDatabase, createTestDatabase } from './postgres.js';
import { redisUrl, requireRedis, testNamespace } from './redis.js';
import { type S3rverHandle, startS3rver } from './s3rver.js';

/**
 * Two gateway replicas of one deployment, for tests of what travels between
 * them: one control plane on the real Postgres (the bootstrap file applied by
 * replica 1, which starts first), the test Redis shared under a namespace of
 * their own (each replica on a tenant event bus the fixture owns, so a test
 * can read its connection names and stats), one Postgres database and one
 * s3rver for the tenants' sources, and one local token issuer.
 */
export interface ReplicaPairServices {
  /** `{ issuers: [...] }`: the `auth` of a tenant whose tokens the issuer signs. */
  readonly auth: unknown;
  readonly sourceDb: TestDatabase;
  readonly s3: S3rverHandle;
}

export interface ReplicaPairOptions {
  /** Names the databases and the Redis namespace. */
  readonly label: string;
  /** Buckets s3rver starts with. */
  readonly buckets?: readonly string[];
  /** The bootstrap file's tenants; sources may use `{ $env: 'S3_KEY_ID' }` / `S3_SECRET` for s3rver. */
  tenants(services: ReplicaPairServices): unknown[];
  /** Runs on the source database and s3rver before the replicas start. */
  seed?(services: ReplicaPairServices): Promise<void>;
  /** Environment of both replicas (e.g. PUBLIC_URL, so one token serves both). */
  readonly env?: Record<string, string>;
  /** Source factories of replica 1 and replica 2; default: every type this build ships. */
  readonly registries?: readonly [ReadonlyMap<string, SourceFactory>?, ReadonlyMap<string, SourceFactory>?];
}

export interface ReplicaPair extends ReplicaPairServices {
  readonly controlDb: TestDatabase;
  readonly issuer: LocalIssuer;
  /** The Redis channel namespace both buses use. */
  readonly namespace: string;
  readonly buses: readonly [RedisTenantEventBus, RedisTenantEventBus];
  readonly replicas: readonly [StartedGateway, StartedGateway];
  /** Closes the replicas, then the buses and services; removes the databases. */
  close(): Promise<void>;
}

export async function startReplicaPair(options: ReplicaPairOptions): Promise<ReplicaPair> {
  await requireRedis();
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer().catch(() => undefined);
  };
  try {
    const [controlDb, sourceDb, s3, issuer] = await Promise.all([
      createTestDatabase(`${options.label}_control`),
      createTestDatabase(`${options.label}_source`),
      startS3rver({ buckets: [...(options.buckets ?? [])] }),
      startLocalIssuer({ path: '/acme-idp' }),
    ]);
    closers.push(
      () => controlDb.drop(),
      () => sourceDb.drop(),
      () => s3.close(),
      () => issuer.close(),
    );
    const services: ReplicaPairServices = {
      auth: { issuers: [{ issuer: issuer.issuer, jwksUri: issuer.jwksUri }] },
      sourceDb,
      s3,
    };
    await options.seed?.(services);
    const configPath = join(await mkdtemp(join(tmpdir(), 'gw-replicas-')), 'gateway.json');
    await writeFile(configPath, JSON.stringify({ tenants: options.tenants(services) }));
    const namespace = testNamespace(options.label);
    const secretsKey = randomBytes(32).toString('base64url');
    const buses: RedisTenantEventBus[] = [];
    for (let i = 0; i < 2; i += 1) {
      const bus = createRedisTenantEventBus({ url: redisUrl(), namespace, logger: silentLogger });
      closers.push(() => bus.close());
      buses.push(bus);
      if (!(await bus.ready(5000))) throw new Error('a tenant event bus did not connect to Redis within 5 s');
    }
    const replicas: StartedGateway[] = [];
    // One after the other: the first applies the bootstrap file to the empty control plane.
    for (let i = 0; i < 2; i += 1) {
      const replica = await startGateway({
        configPath,
        events: { bus: buses[i]! },
        registry: options.registries?.[i] ?? createSourceRegistry(),
        env: {
          DATABASE_URL: controlDb.url,
          REDIS_URL: redisUrl(),
          SECRETS_KEY: secretsKey,
          S3_KEY_ID: s3.credentials.accessKeyId,
          S3_SECRET: s3.credentials.secretAccessKey,
          ...options.env,
        },
      });
      closers.push(() => replica.close());
      replicas.push(replica);
    }
    return {
      ...services,
      controlDb,
      issuer,
      namespace,
      buses: [buses[0]!, buses[1]!],
      replicas: [replicas[0]!, replicas[1]!],
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
