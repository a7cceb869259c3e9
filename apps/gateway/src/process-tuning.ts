import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings for the gateway's own process, applied first thing by the
 * process entry (main.ts) and by the benchmarks' gateway processes.
 *
 * Allocation-site pretenuring off. V8 allocates the objects of an
 * allocation site directly in the old generation once most of them have
 * survived young collections. Starting the gateway (configuration, sources,
 * the control plane) makes sites shared with the request path look
 * long-lived; once they are pretenured, each request allocates some of its
 * objects in the old generation, and those, dead as soon as the request is
 * answered, keep every young object they point at alive through each young
 * collection until the next full one. Measured on a cached `resources/list`
 * at 10 connections: about 1.7 MB promoted per young collection (every
 * request's garbage, 2.3 ms pauses every 40 ms) with it, a fifth of that
 * without, and 10 to 15 % less CPU per request (docs/performance-history.md, "Third
 * round"). It only changes where objects are first allocated, never what
 * the program does. An unknown flag is ignored by V8, so a Node version
 * without it starts all the same.
 */
export function tuneGarbageCollection(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
