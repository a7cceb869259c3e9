/**
 * What a process of this machine has used, read from Linux's /proc: its CPU
 * time (every thread, as `process.cpuUsage()` counts it) and its resident
 * memory. Benchmarks read a server's figures from outside its process, so the
 * server runs exactly as deployed, with nothing of the bench inside it.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** Linux's clock ticks per second for /proc/<pid>/stat times (USER_HZ; 100 on every mainstream kernel). */
const TICKS_PER_SECOND = 100;

/** User plus system CPU time of the process, all its threads, in microseconds (10 ms resolution). */
export async function cpuMicros(pid: number): Promise<number> {
  const { user, system } = await cpuTimes(pid);
  return user + system;
}

/**
 * The process's CPU time in user space and in the kernel (its system calls:
 * socket reads and writes, the event loop's waits), every thread, in
 * microseconds (10 ms resolution).
 */
export async function cpuTimes(pid: number): Promise<{ user: number; system: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name, field 2, is in parentheses and may hold spaces: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
  const micros = (ticks: string | undefined) => (Number(ticks) * 1_000_000) / TICKS_PER_SECOND;
  return { user: micros(fields[11]), system: micros(fields[12]) };
}

/** Resident set size of the process in bytes. */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

/** Pins every thread of `pid` to CPU `core` (`taskset -a -c -p`); threads it starts later inherit it. */
export function pinToCore(pid: number, core: number): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('taskset', ['-a', '-c', '-p', String(core), String(pid)], (error) =>
      error === null ? resolve() : reject(new Error(`taskset on ${pid}: ${error.message}`)),
    ),
  );
}
