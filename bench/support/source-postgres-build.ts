/**
 * Runs a gateway on another build of the postgres source, for the A/B of
 * bench/postgres-read.ts (`--compare-build DIR`): loaded into the gateway
 * process with `node --import bench/support/source-postgres-build.ts
 * apps/gateway/dist/main.js` (Node 23.5+ strips the types and has
 * `registerHooks`), it resolves every module of packages/source-postgres/dist
 * to the same file under SOURCE_POSTGRES_DIST instead, e.g. a copy of the
 * build before a change. Everything else is this repository's build.
 */
import * as nodeModule from 'node:module';
import { pathToFileURL } from 'node:url';

interface Resolved {
  url: string;
}
// Node 23.5+; the repository's @types/node is the oldest supported Node's, which lacks it.
const { registerHooks } = nodeModule as unknown as {
  registerHooks(hooks: {
    resolve(
      specifier: string,
      context: object,
      nextResolve: (specifier: string, context: object) => Resolved,
    ): Resolved;
  }): void;
};

const dir = process.env.SOURCE_POSTGRES_DIST;
if (dir === undefined || dir === '') throw new Error('SOURCE_POSTGRES_DIST names no directory');
const ours = new URL('../../packages/source-postgres/dist/', import.meta.url).href;
const theirs = pathToFileURL(dir.endsWith('/') ? dir : `${dir}/`).href;

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    return resolved.url.startsWith(ours) ? { ...resolved, url: theirs + resolved.url.slice(ours.length) } : resolved;
  },
});
