/**
 * Preloaded into a benchmark server (`--import`) by bench/gc-hot-path.ts:
 * the first SIGUSR2 starts V8's sampling heap profiler, keeping only samples
 * of objects that outlive the young generation (`includeObjectsCollectedByMinorGC`
 * false: what a scavenge frees is dropped; what is promoted, or allocated in
 * the old generation directly, is kept even once a full collection frees
 * it); the second writes the profile to the file named by SURVIVOR_PROFILE.
 * With SAMPLE_ALLOCATIONS=all it keeps every sampled allocation, what a
 * scavenge frees too: where a request's allocations come from.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
let sampling = false;
process.on('SIGUSR2', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: process.env.SAMPLE_ALLOCATIONS === 'all',
    });
    return;
  }
  session.post('HeapProfiler.stopSampling', (error, result) => {
    if (error !== null) throw error;
    writeFileSync(process.env.SURVIVOR_PROFILE!, JSON.stringify(result.profile));
    process.send?.({ survivors: true });
  });
});
