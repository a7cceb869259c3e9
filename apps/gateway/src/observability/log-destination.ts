import pino from 'pino';

/** Past this many characters (UTF-16 code units, about 8 KiB of ASCII) a batch is written at once, before its turn ends. */
const BATCH_CHARS = 8 * 1024;

let shared: { write(line: string): void } | undefined;

/**
 * Standard output for the gateway's log lines, written once per event-loop
 * turn rather than once per line. Every request ends in an access line; with
 * pino's default destination each line was a write of its own, handed to
 * libuv's thread pool and completed on the event loop, and under load that
 * machinery cost more than the whole rest of the line (measured in
 * docs/performance-history.md, "Fourth round"). Here the lines of one turn (the responses the loop
 * finished in one pass over its ready sockets) go out as one synchronous
 * write: at light load that is still a write per line, with no delay; under
 * load, one write for many.
 *
 * Nothing waits for a timer: the batch is written by `setImmediate`, after
 * the current pass, or at once past {@link BATCH_CHARS}, and on `exit` (a
 * `process.exit()` mid-turn, as after a failed start), so no line is held
 * back or lost by an orderly or a failing exit. A SIGKILL loses at most the
 * lines of the turn it interrupts. Writes are synchronous (sonic-boom retries
 * a full pipe), so a stalled log reader applies back-pressure instead of
 * growing the heap without bound.
 *
 * One per process, shared by every app built in it: it is the process's
 * standard output, and one `exit` listener suffices.
 */
export function stdoutLogDestination(): { write(line: string): void } {
  if (shared !== undefined) return shared;
  // sonic-boom (pino's own destination) does the writing: synchronous, retrying a full pipe, quiet on EPIPE.
  // Lines are gathered here and joined once, rather than appended to its buffer one by one.
  const out = pino.destination({ dest: 1, sync: true });
  let pending: string[] = [];
  let pendingLength = 0;
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled !== undefined) clearImmediate(scheduled);
    scheduled = undefined;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    pendingLength = 0;
    out.write(text);
  };
  process.once('exit', flush);
  shared = {
    write(line: string) {
      pending.push(line);
      pendingLength += line.length;
      if (pendingLength >= BATCH_CHARS) flush();
      else scheduled ??= setImmediate(flush);
    },
  };
  return shared;
}
