import pino from 'pino';

/** Past this much text a batch is written at once, before its turn ends (below sonic-boom's 16 KiB write size). */
const BATCH_BYTES = 8 * 1024;

let shared: { write(line: string): void } | undefined;

/**
 * Standard output for the gateway's log lines, written once per event-loop
 * turn rather than once per line. Every request ends in an access line; with
 * pino's default destination each line was a write of its own, handed to
 * libuv's thread pool and completed on the event loop, and under load that
 * machinery cost more than the whole rest of the line (measured in
 * docs/performance.md). Here the lines of one turn (the responses the loop
 * finished in one pass over its ready sockets) go out as one synchronous
 * write: at light load that is still a write per line, with no delay; under
 * load, one write for many.
 *
 * Nothing waits for a timer: the batch is written by `setImmediate`, after
 * the current pass, or at once past {@link BATCH_BYTES}, and on `exit` (a
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
  // sonic-boom writes what it holds once it holds BATCH_BYTES; `flush()` writes the rest.
  const out = pino.destination({ dest: 1, sync: true, minLength: BATCH_BYTES });
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    scheduled = undefined;
    out.flush();
  };
  process.once('exit', () => {
    if (scheduled !== undefined) clearImmediate(scheduled);
    flush();
  });
  shared = {
    write(line: string) {
      out.write(line);
      scheduled ??= setImmediate(flush);
    },
  };
  return shared;
}
