import type { Logger } from '@mcpgw/core';

/** Where warnings go: the app's pino logger (only its `warn` is used). */
type WarningLog = Pick<Logger, 'warn'>;

/** Warnings held while no logger exists yet; a start emits a handful at most. */
const MAX_HELD_WARNINGS = 20;

/** Process warnings on their way into the JSON log. */
export interface ProcessWarnings {
  /** Logs the warnings held so far, and every later one, through `logger`. */
  logTo(logger: WarningLog): void;
}

/**
 * Sends process warnings (`process.emitWarning`: deprecations, experimental
 * features, and the AWS SDK's multi-line NodeVersionSupportWarning, emitted
 * when an S3 client is created) to the JSON log at `warn`, instead of Node's
 * plain-text lines on stderr, so the process writes nothing but JSON lines.
 *
 * Node prints warnings through a `'warning'` listener of its own, added at
 * startup unless `--no-warnings` is given; it is removed here and replaced,
 * so the warning is still reported, once, in the log's format. Warnings that
 * arrive before the logger exists (sources are created while the app is
 * built) are held and logged when `logTo` is called. Call this first thing.
 */
export function routeProcessWarnings(): ProcessWarnings {
  for (const listener of process.listeners('warning')) process.off('warning', listener);
  let logger: WarningLog | undefined;
  const held: Error[] = [];
  let dropped = 0;
  const log = (target: WarningLog, warning: Error) => {
    const code = (warning as Error & { code?: unknown }).code;
    target.warn(
      { warning: { name: warning.name, ...(typeof code === 'string' ? { code } : {}), message: warning.message } },
      'process warning',
    );
  };
  process.on('warning', (warning) => {
    if (logger !== undefined) log(logger, warning);
    else if (held.length < MAX_HELD_WARNINGS) held.push(warning);
    else dropped += 1;
  });
  return {
    logTo(target) {
      logger = target;
      for (const warning of held.splice(0)) log(target, warning);
      if (dropped > 0) target.warn({ dropped }, 'process warnings dropped before the logger existed');
      dropped = 0;
    },
  };
}
