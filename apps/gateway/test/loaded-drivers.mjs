// Preloaded into a built gateway by optional-drivers.test.ts (NODE_OPTIONS=--import): on SIGUSR2 it
// prints which optional drivers the process has loaded. CommonJS packages, whether imported or
// required, are entries of the one module cache that `require.cache` shows.
import { createRequire } from 'node:module';

// undici: the npm copy the issuers' guarded fetch uses (not Node's own), loaded on an issuer's first fetch.
const DRIVERS = ['ioredis', '@aws-sdk/client-s3', 'pg', 'undici'];
const moduleCache = createRequire(import.meta.url).cache;
process.on('SIGUSR2', () => {
  const files = Object.keys(moduleCache);
  const loaded = DRIVERS.filter((name) => files.some((file) => file.includes(`/node_modules/${name}/`)));
  process.stdout.write(`loaded drivers: ${JSON.stringify(loaded)}\n`);
});
