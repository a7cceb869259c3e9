import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// The gateway's log lines on standard output, as an operator's log shipper must see them: every
// line, at once (not when some buffer fills), in order, and the lines written just before the process
// exits. Each case runs a child process on the built module with its stdout a pipe, as a container
// runtime gives it, and logs through the gateway's own logger on its default destination.

const MODULE = fileURLToPath(new URL('../dist/observability/gateway-logger.js', import.meta.url));

/** Children still running when a case ends (it failed before telling them to stop): ended with it. */
const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) child.kill();
  running.clear();
});

/** Runs `body` as an ES module in a child, with a gateway logger at info as `log`. */
function runChild(body: string): {
  output: () => string;
  waitFor: (text: string) => Promise<void>;
  send: (message: string) => void;
  exited: Promise<number | null>;
} {
  if (!existsSync(MODULE)) throw new Error(`${MODULE} is missing: run \`npm run build\` first (npm test does)`);
  const script = `import { createGatewayLogger } from ${JSON.stringify(MODULE)};\nconst log = createGatewayLogger({ LOG_LEVEL: 'info' });\n${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
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

/** The `msg` of each JSON line written. */
const messages = (output: string): string[] =>
  output
    .trimEnd()
    .split('\n')
    .map((line) => (JSON.parse(line) as { msg: string }).msg);

describe("the gateway's log lines on standard output", () => {
  it('writes each line without waiting for more, while the process keeps running', async () => {
    // The child logs two short lines (far below any buffer's size), then idles until told to stop.
    const child = runChild(`
      log.info('first');
      log.info('second');
      process.stdin.once('data', () => process.exit(0));
    `);
    await child.waitFor('"second"');
    expect(messages(child.output())).toEqual(['first', 'second']);
    child.send('stop');
    expect(await child.exited).toBe(0);
  });

  it('writes the line logged just before the process exits', async () => {
    // As the gateway's "second signal: exiting now" does: a line, then process.exit() in the same turn.
    const child = runChild(`
      log.info('last words');
      process.exit(3);
    `);
    expect(await child.exited).toBe(3);
    expect(messages(child.output())).toEqual(['last words']);
  });

  it('keeps every line, whole and in order, when one turn writes more than a pipe holds', async () => {
    const child = runChild(`
      for (let i = 0; i < 2000; i += 1) log.info({ i, padding: 'x'.repeat(200) }, 'line');
      process.stdin.once('data', () => process.exit(0));
    `);
    await child.waitFor('"i":1999,');
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
