// Preloaded into a gateway by bench/after-idle-ab.ts (`node --import`): 3 s after the process
// starts (the gateway listens within 1 s), one memory-reducing full collection, V8's `gc()` with its
// last-resort flavour (V8 12 and later), to give back the young generation the start grew. `gc`
// is read from a fresh context while --expose-gc is briefly on, so the gateway never sees one.
// Measured and not kept in the gateway: docs/performance.md, "Idle memory".
import { setFlagsFromString } from 'node:v8';
import { setTimeout } from 'node:timers';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
setFlagsFromString('--no-expose-gc');
setTimeout(() => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }), 3_000).unref();
