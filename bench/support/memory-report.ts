/**
 * Where a gateway's memory is, for bench/many-principals.ts (`--memory-report`):
 * loaded into the gateway process with `node --expose-gc --import
 * bench/support/memory-report.ts apps/gateway/dist/main.js`, it answers
 * SIGUSR2 by collecting garbage (so what is left is what is retained) and
 * appending one JSON line to the file named by MEMORY_REPORT_FILE: RSS, the
 * V8 heap by space, external and ArrayBuffer bytes. RSS that the heap and
 * external memory do not account for is the allocator's and the code's
 * (malloc arenas, fragmentation, compiled code outside the heap). Nothing in
 * the gateway's own code knows of it.
 */
import { appendFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.MEMORY_REPORT_FILE;
if (file === undefined) throw new Error('memory-report: MEMORY_REPORT_FILE is not set');
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('memory-report: start Node with --expose-gc');

process.on('SIGUSR2', () => {
  gc();
  const usage = process.memoryUsage();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
  appendFileSync(file, `${JSON.stringify({ ...usage, spaces })}\n`);
});
