/**
 * The CPU time Postgres spends on one database's connections, read from
 * Linux's /proc (Postgres runs on this machine). Backends are found by their
 * process title, which names the database ("postgres: 15/main: user db
 * 127.0.0.1(port) idle"), and sampled every `everyMs`: a backend that exits
 * between samples (a connection the pool destroyed) keeps what was last read
 * of it, so at most one interval of its time is missed.
 */
import { readdir, readFile } from 'node:fs/promises';
import type * as ProcessUsageModule from './process-usage.js';

const { cpuMicros } = (await import(new URL('./process-usage.ts', import.meta.url).href)) as typeof ProcessUsageModule;

export interface BackendUsage {
  /** CPU µs of the database's backends since the sampler started (sampled now). */
  total(): Promise<number>;
  stop(): void;
}

export async function sampleBackends(database: string, everyMs = 200): Promise<BackendUsage> {
  /** By pid: CPU when first seen (0 for a backend that started after the first sample) and when last seen. */
  const seen = new Map<number, { first: number; last: number }>();
  let started = false;
  const sample = async () => {
    for (const name of await readdir('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const title = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
      if (!title.startsWith('postgres: ') || !title.includes(` ${database} `)) continue;
      const pid = Number(name);
      const used = await cpuMicros(pid).catch(() => undefined);
      if (used === undefined) continue;
      const known = seen.get(pid);
      if (known === undefined) seen.set(pid, { first: started ? 0 : used, last: used });
      else known.last = used;
    }
    started = true;
  };
  await sample();
  let running: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(sample, () => undefined);
  }, everyMs);
  return {
    async total() {
      running = running.then(sample, () => undefined);
      await running;
      let sum = 0;
      for (const { first, last } of seen.values()) sum += last - first;
      return sum;
    },
    stop: () => clearInterval(timer),
  };
}
