/**
 * Collects a response body into one buffer, refusing early when the declared
 * length is over `maxBytes` and guarding while streaming (a length can be
 * absent or wrong), so at most `maxBytes` (plus one chunk) is ever held.
 * Throws `tooLarge()` on excess; destroying the stream frees the socket.
 */
export async function readBounded(
  body: AsyncIterable<Uint8Array> & { destroy?: (error?: Error) => void },
  maxBytes: number,
  declaredLength: number | undefined,
  tooLarge: () => Error,
  signal: AbortSignal,
): Promise<Buffer> {
  if (declaredLength !== undefined && declaredLength > maxBytes) {
    body.destroy?.();
    throw tooLarge();
  }
  const onAbort = (): void => body.destroy?.(signal.reason instanceof Error ? signal.reason : undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    signal.throwIfAborted();
    const chunks: Uint8Array[] = [];
    let total = 0;
    // Leaving the loop early (throw) calls the stream's return(), which destroys it.
    for await (const chunk of body) {
      total += chunk.byteLength;
      if (total > maxBytes) throw tooLarge();
      chunks.push(chunk);
    }
    signal.throwIfAborted();
    return Buffer.concat(chunks, total);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
