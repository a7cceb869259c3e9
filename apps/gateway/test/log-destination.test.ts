import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The gateway's standard output batches the log lines of one event-loop turn into one write. What an
// operator's log shipper must still see: every line, at once (not when some buffer fills), and the
// lines written just before the process exits. Each case runs a child process on the built module
// with its stdout a pipe, as a container runtime gives it.

const MODULE = fileURLToPath(new URL('../dist/observability/log-destination.js', import.meta.url));

/** Runs `body` as an ES module in a child, with `stdoutLogDestination` imported as `destination`. */
function runChild(body: string): {
  output: () => string;
  waitFor: (text: string) => Promise<void>;
  send: (message: string) => void;
  exited: Promise<number | null>;
} {
  if (!existsSync(MODULE)) throw new Error(`${MODULE} is missing: run \`npm run build\` first (npm test does)`);
  const script = `import { stdoutLogDestination as destination } from ${JSON.stringify(MODULE)};\n${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const waiter of waiters.filter((w) => output.includes(w.text))) waiter.resolve();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    output: () => output,
    waitFor: (text) =>
      new Promise<void>((resolve, reject) => {
        if (output.includes(text)) return resolve();
        waiters.push({ text, resolve });
        void exited.then(() => reject(new Error(`exited before writing ${text}; wrote ${JSON.stringify(output)}`)));
      }),
    send: (message) => child.stdin.write(`${message}\n`),
    exited,
  };
}

describe('the log destination on standard output', () => {
  it('writes a turn’s lines without waiting for more, while the process keeps running', async () => {
    // The child writes two short lines (far below any batch size), then idles until told to stop.
    const child = runChild(`
      const out = destination();
      out.write('{"msg":"first"}\\n');
      out.write('{"msg":"second"}\\n');
      process.stdin.once('data', () => process.exit(0));
    `);
    await child.waitFor('"second"');
    expect(child.output()).toBe('{"msg":"first"}\n{"msg":"second"}\n');
    child.send('stop');
    expect(await child.exited).toBe(0);
  });

  it('writes the lines of the turn in which the process exits', async () => {
    // As the gateway's "second signal: exiting now" does: a line, then process.exit() in the same turn.
    const child = runChild(`
      const out = destination();
      out.write('{"msg":"last words"}\\n');
      process.exit(3);
    `);
    expect(await child.exited).toBe(3);
    expect(child.output()).toBe('{"msg":"last words"}\n');
  });

  it('keeps every line, in order, when one turn writes more than a batch', async () => {
    const child = runChild(`
      const out = destination();
      for (let i = 0; i < 2000; i += 1) out.write(JSON.stringify({ msg: 'line', i }) + '\\n');
      process.stdin.once('data', () => process.exit(0));
    `);
    await child.waitFor('"i":1999}');
    const lines = child
      .output()
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { i: number }).i);
    expect(lines).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    child.send('stop');
    expect(await child.exited).toBe(0);
  });
});
