import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The built entry points; `npm run build` makes them (npm test builds first). */
export const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
export const TOKEN_CLI = fileURLToPath(new URL('../dist/token-cli.js', import.meta.url));
export const ADMIN_CLI = fileURLToPath(new URL('../dist/admin-cli.js', import.meta.url));

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningProcess {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  exited: Promise<Exit>;
  /** Resolves once stdout holds `text`; rejects when the process exits first. */
  waitForOutput(text: string): Promise<void>;
}

/**
 * Runs a built script with exactly `env` (plus PATH and HOME), as an operator
 * would, and keeps its output, on `node` (this process's Node unless given).
 * Killed after `killAfterMs` at the latest.
 */
export function runBuilt(
  script: string,
  args: string[],
  options: { env: Record<string, string>; cwd?: string; killAfterMs?: number; node?: string },
): RunningProcess {
  if (!existsSync(script)) throw new Error(`${script} is missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(options.node ?? process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const wake of waiters.splice(0)) wake();
      resolve({ code, signal, stdout, stderr });
    }),
  );
  // Generous: a gateway opens its embedded control-plane database (PGlite) at start, seconds on a loaded machine.
  const timer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 90_000);
  void exited.then(() => clearTimeout(timer));
  const waitForOutput = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (stdout.includes(text)) return resolve();
        if (child.exitCode !== null || child.signalCode !== null) {
          return reject(
            new Error(
              `exited (${child.exitCode ?? child.signalCode}) before printing ${JSON.stringify(text)}:\n${stdout}\n${stderr}`,
            ),
          );
        }
        waiters.push(check);
      };
      check();
    });
  return { child, stdout: () => stdout, stderr: () => stderr, exited, waitForOutput };
}
