// Preloaded into a built gateway by optional-drivers.test.ts (NODE_OPTIONS=--import): on SIGUSR2 it
// prints which optional drivers the process has loaded. CommonJS packages, whether imported or
// required, are entries of the one module cache that `require.cache` shows. It also says whether
// Node's own bundled undici is loaded (global fetch and WebSocket, and on Node 22 and later any ES
// import of node:http, whose namespace reads the module's lazy WebSocket getters), which
// `process.moduleLoadList` names among Node's internal modules.
import { createRequire } from 'node:module';

// undici: the npm copy the issuers' guarded fetch uses (not Node's own), loaded on an issuer's first fetch.
const DRIVERS = ['ioredis', '@aws-sdk/client-s3', 'pg', 'undici'];
const moduleCache = createRequire(import.meta.url).cache;
process.on('SIGUSR2', () => {
  const files = Object.keys(moduleCache);
  const loaded = DRIVERS.filter((name) => files.some((file) => file.includes(`/node_modules/${name}/`)));
  const nodeUndici = process.moduleLoadList.includes('NativeModule internal/deps/undici/undici');
  // One write, so that a reader that has the last line has both.
  process.stdout.write(`loaded drivers: ${JSON.stringify(loaded)}\nnode's undici loaded: ${nodeUndici}\n`);
});
