/**
 * How a message travels on a transport that carries only text: the
 * publishing replica's id, a newline, then the message. The id lets a
 * receiver tell its own echo (ReplicaBusListener's `fromThisReplica`); a
 * replica id never holds a newline, a message may.
 */
export function encodeBusFrame(origin: string, message: string): string {
  return `${origin}\n${message}`;
}

/** The origin and message of a frame, or undefined when the text is not one (dropped by the transport). */
export function decodeBusFrame(text: string): { readonly origin: string; readonly message: string } | undefined {
  const newline = text.indexOf('\n');
  if (newline <= 0) return undefined;
  return { origin: text.slice(0, newline), message: text.slice(newline + 1) };
}
