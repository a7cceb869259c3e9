import type { Logger } from '@mcpgw/core';

/**
 * oidc-provider prints its notices on the console as its module is
 * evaluated: on Node 20, "Unsupported runtime" (its own support policy; the
 * gateway runs and is tested on Node 20, docs/operations.md, "Node
 * versions"). The gateway's output is JSON lines only, so main.ts imports
 * this module first (ESM evaluates a module's imports in order, before any
 * of the app's) and each such line is held until the logger exists, then
 * logged once at debug. Every other console line passes through untouched.
 */

// The prefix oidc-provider gives its notices, colored on a TTY.
// eslint-disable-next-line no-control-regex -- the ANSI escape (ESC) is what the color codes start with
const NOTICE = /^(?:\x1b\[[\d;]*m)?oidc-provider (?:NOTICE|WARNING): (.*?)(?:\x1b\[0m)?$/s;

const held: string[] = [];
let sink: Logger | undefined;

function routed(original: (...args: unknown[]) => void): (...args: unknown[]) => void {
  return (...args: unknown[]) => {
    const match = args.length === 1 && typeof args[0] === 'string' ? NOTICE.exec(args[0]) : null;
    if (match === null) return original.apply(console, args);
    const notice = match[1] as string;
    if (sink === undefined) held.push(notice);
    else sink.debug({ notice }, 'oidc-provider notice');
  };
}

console.info = routed(console.info.bind(console));
console.warn = routed(console.warn.bind(console));

/** Logs the notices held so far, and every later one, to `logger` (debug). */
export function logLibraryNotices(logger: Logger): void {
  sink = logger;
  for (const notice of held.splice(0)) logger.debug({ notice }, 'oidc-provider notice');
}
