import pino from 'pino';
import type { EnvConfig } from '@mcpgw/config';
import { stdoutLogDestination } from './log-destination.js';

/**
 * The gateway's JSON log lines at LOG_LEVEL, credentials redacted: the app's
 * logger, and the one main.ts opens the control plane with before the app
 * exists (both write to the one standard-output destination).
 */
export function createGatewayLogger(
  env: Pick<EnvConfig, 'LOG_LEVEL'>,
  stream: pino.DestinationStream = stdoutLogDestination(),
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
