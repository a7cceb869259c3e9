import pino from 'pino';
import type { EnvConfig } from '@mcpgw/config';

let standardOutput: pino.DestinationStream | undefined;

/**
 * Standard output, one synchronous write per line (sonic-boom, pino's own
 * destination): a line is out before the call returns, so a `process.exit()`
 * right after it (the second shutdown signal, a failed start) loses nothing,
 * and a stalled log reader holds the process back instead of growing its
 * heap with lines it cannot take. Gathering the lines of one event-loop turn
 * into one write was measured as deployed and did not pay
 * (docs/performance.md, "Performance mechanisms"). One per process, shared
 * by main.ts's logger and by every app built in the process.
 */
function standardOutputDestination(): pino.DestinationStream {
  standardOutput ??= pino.destination({ dest: 1, sync: true });
  return standardOutput;
}

/**
 * The gateway's JSON log lines at LOG_LEVEL, credentials redacted: the app's
 * logger, and the one main.ts opens the control plane with before the app
 * exists (both write to the one standard-output destination).
 */
export function createGatewayLogger(
  env: Pick<EnvConfig, 'LOG_LEVEL'>,
  stream: pino.DestinationStream = standardOutputDestination(),
): pino.Logger {
  return pino(
    {
      level: env.LOG_LEVEL,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    stream,
  );
}
