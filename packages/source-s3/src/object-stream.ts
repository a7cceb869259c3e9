import { type BlobByteStream, errorSummary, GatewayError, type Logger } from '@mcpgw/core';

/** A GetObject body as the SDK hands it over (a Node stream under the Node handler). */
export type ObjectBody = AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => void };

export interface ObjectStreamOptions {
  body: ObjectBody;
  /** The object's Content-Length: exactly this many bytes must arrive. */
  byteLength: number;
  /** The operation deadline (and the caller's cancellation): aborting it stops the body. */
  deadline: AbortSignal;
  /** Frees the tenant slot the GetObject holds; called once, when the body is done, failed or let go. */
  release: () => void;
  sourceId: string;
  logger: Logger;
}

/**
 * An object's body as a {@link BlobByteStream}: the tenant slot stays held
 * until the body is read to its end, fails, or is let go (and at the latest
 * until the operation deadline, which aborts the body). A failure or a length
 * other than the declared one fails the iteration with
 * MCPGW_SOURCE_UNAVAILABLE naming only the source; the cause goes to the log.
 */
export function objectStream(options: ObjectStreamOptions): BlobByteStream {
  const { body, byteLength, deadline, sourceId, logger } = options;
  let done = false;
  let started = false;
  const finish = () => {
    if (done) return;
    done = true;
    deadline.removeEventListener('abort', onDeadline);
    options.release();
  };
  const letGo = () => {
    if (done) return;
    body.destroy?.();
    finish();
  };
  const onDeadline = () => letGo();
  if (deadline.aborted) letGo();
  else deadline.addEventListener('abort', onDeadline, { once: true });

  async function* bytes(): AsyncGenerator<Uint8Array> {
    if (started || done) throw new Error(`the body of an object of S3 source "${sourceId}" is read once`);
    started = true;
    let total = 0;
    let complete = false;
    try {
      for await (const chunk of body) {
        total += chunk.byteLength;
        if (total > byteLength) throw new Error(`more bytes than the declared ${byteLength}`);
        yield chunk;
      }
      if (total !== byteLength) throw new Error(`${total} of the declared ${byteLength} bytes`);
      complete = true;
    } catch (error) {
      logger.warn({ operation: 'GetObject', err: errorSummary(error), bytesRead: total }, 'S3 object body failed');
      throw new GatewayError('MCPGW_SOURCE_UNAVAILABLE', `S3 source "${sourceId}" failed while sending an object`, {
        cause: error,
      });
    } finally {
      // Also when the reader stops early: an unread rest of the body is dropped with its socket.
      if (complete) finish();
      else letGo();
    }
  }

  return { byteLength, [Symbol.asyncIterator]: bytes, cancel: letGo };
}
