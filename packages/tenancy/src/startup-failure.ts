/**
 * A start that failed for a reason the operator fixes by changing one
 * setting: the message is one line naming that setting, printed without a
 * stack trace (the stack would be the gateway's, not the operator's problem).
 */
export class StartupFailure extends Error {
  /** The environment variable to change, e.g. `PORT` or `DATABASE_URL`. */
  readonly setting: string;

  constructor(setting: string, message: string) {
    super(message);
    this.name = 'StartupFailure';
    this.setting = setting;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  // Node's connect to a name with several addresses fails with every attempt's error.
  const errors = (error as { errors?: unknown } | null)?.errors;
  return Array.isArray(errors) ? codeOf(errors[0]) : undefined;
}

/** Why binding HOST:PORT failed, as the setting to change; undefined when it is not the operator's to fix. */
export function listenFailure(error: unknown, host: string, port: number): StartupFailure | undefined {
  switch (codeOf(error)) {
    case 'EADDRINUSE':
      return new StartupFailure(
        'PORT',
        `PORT ${port} is in use on HOST ${host}: another process listens there; set PORT to a free port`,
      );
    case 'EACCES':
      return new StartupFailure(
        'PORT',
        `PORT ${port} on HOST ${host} needs privileges this process does not have; set PORT to 1024 or above`,
      );
    case 'EADDRNOTAVAIL':
      return new StartupFailure(
        'HOST',
        `HOST ${host} is not an address of this machine; set HOST to one of its addresses, or 0.0.0.0 for all`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupFailure(
        'HOST',
        `HOST ${host} does not resolve to an address of this machine; set HOST to an address, or 0.0.0.0 for all`,
      );
    default:
      return undefined;
  }
}

/** A connection string as it may be printed: the password replaced by `***`. */
export function redactedUrl(url: string): string {
  if (!URL.canParse(url)) return '(a connection string that does not parse)';
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

/**
 * Why the control-plane database could not be reached, as one line naming
 * DATABASE_URL (password redacted); undefined for failures that are not
 * about reaching it (a migration refusing a newer schema says so itself).
 * Codes: Node's socket errors and PostgreSQL's SQLSTATE (Appendix A, class
 * 28 invalid authorization, 3D000 invalid catalog name).
 */
export function databaseFailure(error: unknown, url: string): StartupFailure | undefined {
  const code = codeOf(error);
  const detail = (error as Error | undefined)?.message ?? String(error);
  const at = `DATABASE_URL (the control plane) ${redactedUrl(url)}`;
  let reason: string | undefined;
  if (code === 'ECONNREFUSED') reason = 'connection refused: no Postgres listens there';
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') reason = 'its host name does not resolve';
  else if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
    reason = 'the host does not answer';
  else if (code === 'ECONNRESET') reason = 'the server closed the connection';
  else if (code === '28P01' || code === '28000') reason = `authentication failed (${detail})`;
  else if (code === '3D000') reason = `no such database (${detail})`;
  else if (/timeout/i.test(detail) && /connect/i.test(detail)) reason = 'the server did not answer in time';
  else if (/SSL|TLS|certificate/i.test(detail)) reason = `TLS failed (${detail})`;
  return reason === undefined ? undefined : new StartupFailure('DATABASE_URL', `${at}: ${reason}`);
}
