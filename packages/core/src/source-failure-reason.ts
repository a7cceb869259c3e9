import { EgressRefusedError } from './egress-guard.js';

/**
 * Why a source could not be reached, as a class an admin can act on: fix the
 * credentials, the database or bucket name, the host, the port, the TLS
 * settings, the egress allowlist; `unavailable` is anything else.
 */
export type SourceFailureReason =
  | 'authentication-failed'
  | 'no-such-database'
  | 'no-such-bucket'
  | 'connection-refused'
  | 'timeout'
  | 'tls'
  | 'host-not-found'
  | 'egress-refused'
  | 'unavailable';

/** Every reason, in the order docs/admin-api.md lists them. */
export const SOURCE_FAILURE_REASONS: readonly SourceFailureReason[] = [
  'authentication-failed',
  'no-such-database',
  'no-such-bucket',
  'connection-refused',
  'timeout',
  'tls',
  'host-not-found',
  'egress-refused',
  'unavailable',
];

// Postgres SQLSTATEs (PostgreSQL documentation, appendix A "Error Codes"):
// 28P01 invalid_password, 28000 invalid_authorization_specification (e.g. a
// NOLOGIN role, no pg_hba entry), 3D000 invalid_catalog_name.
const BY_CODE: Readonly<Record<string, SourceFailureReason>> = {
  '28P01': 'authentication-failed',
  '28000': 'authentication-failed',
  '3D000': 'no-such-database',
  ECONNREFUSED: 'connection-refused',
  ETIMEDOUT: 'timeout',
  ESOCKETTIMEDOUT: 'timeout',
  ENOTFOUND: 'host-not-found',
  EAI_AGAIN: 'host-not-found',
  EAI_NONAME: 'host-not-found',
  // S3 error codes (Amazon S3 API reference, "Error responses").
  NoSuchBucket: 'no-such-bucket',
  InvalidAccessKeyId: 'authentication-failed',
  SignatureDoesNotMatch: 'authentication-failed',
  AccessDenied: 'authentication-failed',
  InvalidToken: 'authentication-failed',
  ExpiredToken: 'authentication-failed',
  TimeoutError: 'timeout',
};

/** Node's and OpenSSL's certificate and handshake error codes. */
const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/;

/** What an error's code, name or HTTP status says. */
function structural(error: object): SourceFailureReason | undefined {
  if (error instanceof EgressRefusedError) return 'egress-refused';
  const { code, name } = error as { code?: unknown; name?: unknown };
  const status = (error as { $metadata?: { httpStatusCode?: unknown } }).$metadata?.httpStatusCode;
  if (typeof code === 'string') {
    if (Object.hasOwn(BY_CODE, code)) return BY_CODE[code];
    if (TLS_CODE.test(code)) return 'tls';
  }
  if (typeof name === 'string') {
    if (Object.hasOwn(BY_CODE, name)) return BY_CODE[name];
    // HeadBucket answers without a body: only the status says what went wrong.
    if (name === 'NotFound' && status === 404) return 'no-such-bucket';
  }
  if (status === 401 || status === 403) return 'authentication-failed';
  return undefined;
}

/** What a message says, for the errors that carry no code (pg's own SSL and timeout errors). */
function byMessage(error: object): SourceFailureReason | undefined {
  const { message } = error as { message?: unknown };
  if (typeof message !== 'string') return undefined;
  if (/does not support SSL|certificate|TLS connection/i.test(message)) return 'tls';
  if (/timeout|timed out/i.test(message)) return 'timeout';
  return undefined;
}

/** `error` and every error behind it (`cause`, AggregateError's `errors`), innermost first. */
function chain(error: unknown, depth = 0, seen = new Set<unknown>()): object[] {
  if (typeof error !== 'object' || error === null || depth > 8 || seen.has(error)) return [];
  seen.add(error);
  const inner = [
    (error as { cause?: unknown }).cause,
    ...(error instanceof AggregateError ? (error.errors as unknown[]) : []),
  ];
  return [...inner.flatMap((item) => chain(item, depth + 1, seen)), error];
}

/**
 * The class of a driver error (pg, the AWS SDK, Node's net and tls),
 * looking through `cause` and AggregateError's `errors`: an egress refusal
 * anywhere wins (it is what the admin must change), then the innermost code,
 * name or status, then the innermost telling message; `unavailable` when
 * nothing known is found.
 */
export function sourceFailureReason(error: unknown): SourceFailureReason {
  const errors = chain(error);
  if (errors.some((item) => item instanceof EgressRefusedError)) return 'egress-refused';
  for (const item of errors) {
    const reason = structural(item);
    if (reason !== undefined) return reason;
  }
  for (const item of errors) {
    const reason = byMessage(item);
    if (reason !== undefined) return reason;
  }
  return 'unavailable';
}
