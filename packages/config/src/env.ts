import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { egressAllowEntryProblem } from '@mcpgw/core';
import { z } from 'zod';
import { ADMIN_CLI_ENV_KEYS } from './admin-cli-env.js';
import type { ConfigIssue } from './config-error.js';
import { ConfigError, formatPath } from './config-error.js';
import { strayEnvNameIssues } from './stray-env-names.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const origin = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}, 'must be an origin such as https://app.example.com (scheme, host and optional port; no path or trailing slash)');

/** An IP address or a CIDR block (`10.0.0.0/8`, `fd00::/8`), as Fastify's `trustProxy` list takes them. */
const addressOrBlock = z.string().refine((value) => {
  const [address = '', prefix, ...rest] = value.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}, 'must be an IP address or a CIDR block such as 10.0.0.0/8 or fd00::/8');

/** `a, b,,c` → `['a', 'b', 'c']`: the list settings' one syntax. */
const commaSeparated = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

const perMinute = z.coerce.number().int('must be a whole number of requests per minute').min(0);

/**
 * The environment the gateway reads, validated once at start. Every key here
 * is listed in .env.example (a test keeps the two equal). Defaults are the
 * embedded development setup: loopback only.
 */
export const envSchema = z.object({
  /** Interface to bind. Anonymous tenants are refused unless this is a loopback address. */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** TCP port; 0 picks a free one (tests). */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** The externally visible base URL; tenant endpoints are `${PUBLIC_URL}/t/{tenant}/mcp`. Default http://HOST:PORT. */
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .refine((value) => {
      // Refinements run after a failed format check too: the format error is the one to report.
      if (!URL.canParse(value)) return true;
      const url = new URL(value);
      return url.search === '' && url.hash === '' && url.pathname === '/';
    }, 'must be an origin such as https://mcp.example.com (no path, query or fragment): tenant endpoints and their RFC 9728 metadata live at fixed paths under it')
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  /** Path of the bootstrap file (JSON or YAML). Unset: the built-in demo tenant. */
  GATEWAY_CONFIG: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  /** Comma-separated browser origins allowed to call the MCP endpoints (besides PUBLIC_URL's own). */
  ALLOWED_ORIGINS: z.string().transform(commaSeparated).pipe(z.array(origin)).default([]),
  /**
   * Destinations a tenant admin may configure although they are internal
   * (loopback, private, link-local, ...): comma-separated CIDRs (`10.0.0.0/8`),
   * addresses (`127.0.0.1`) and host names (`minio.internal`, trusted whatever
   * they resolve to). What operators write (the bootstrap file, operator
   * admin calls) is never restricted. Default none.
   */
  EGRESS_ALLOW: z
    .string()
    .transform(commaSeparated)
    .pipe(
      z.array(
        z.string().superRefine((entry, ctx) => {
          const problem = egressAllowEntryProblem(entry);
          if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
        }),
      ),
    )
    .default([]),
  /** Folder for local state: the development authorization server's signing keys. */
  DATA_DIR: z.string().min(1).default('.data'),
  /**
   * Redis for the result and catalog caches, shared by every replica:
   * `redis://` or `rediss://` for one node, `redis+cluster://h1:p1,h2:p2` (or
   * `rediss+cluster://`) for Redis Cluster. Unset: an in-process cache.
   */
  REDIS_URL: z
    .string()
    .regex(
      /^rediss?(\+cluster)?:\/\/\S+$/i,
      'must start with redis://, rediss://, redis+cluster:// or rediss+cluster://',
    )
    .optional(),
  /**
   * The control-plane store (tenants, issuers, sources, grants, audit log),
   * shared by every replica: `postgres://…`. Unset: embedded PGlite under
   * DATA_DIR (one replica; keeps what was written across restarts).
   */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/i, 'must be a postgres:// or postgresql:// connection string')
    .optional(),
  /**
   * `true`: this gateway runs as the only replica, on purpose, with the
   * embedded control-plane store (PGlite under DATA_DIR). That store is this
   * replica's own: what the admin API writes on it is invisible to any other
   * replica and lasts only as long as DATA_DIR does. A non-loopback HOST
   * without DATABASE_URL refuses to start unless this is set.
   */
  SINGLE_REPLICA: z
    .enum(['true', 'false'], 'must be true or false')
    .transform((value) => value === 'true')
    .default(false),
  /** Server secret (at least 32 characters) keying cursor encryption and cache keys; must be equal on every replica. */
  SECRETS_KEY: z.string().min(32, 'must be at least 32 characters (e.g. `openssl rand -base64 32`)').optional(),
  /**
   * Requests per minute from one client address, checked before the tenant
   * or any token is looked at. 0 (the default) is off: behind a reverse proxy
   * every request comes from the proxy's address. Loopback peers are exempt.
   */
  RATE_LIMIT_IP_PER_MINUTE: perMinute.default(0),
  /** Default requests per minute to one tenant (all callers); a tenant's `limits.requestsPerMinute` overrides. 0 is off. */
  RATE_LIMIT_TENANT_PER_MINUTE: perMinute.default(60_000),
  /** Default requests per minute from one authenticated caller; a tenant's `limits.perPrincipalPerMinute` overrides. 0 is off. */
  RATE_LIMIT_PRINCIPAL_PER_MINUTE: perMinute.default(6_000),
  /**
   * Requests per minute to the admin API (`/admin/v1`) from one client
   * address, checked before any token is verified. 0 is off. Loopback peers
   * are exempt while TRUSTED_PROXIES is empty.
   */
  RATE_LIMIT_ADMIN_IP_PER_MINUTE: perMinute.default(600),
  /** Requests per minute to the admin API from one authenticated admin (operator or tenant admin). 0 is off. */
  RATE_LIMIT_ADMIN_PER_MINUTE: perMinute.default(300),
  /**
   * Comma-separated addresses and CIDR blocks of the reverse proxies in front
   * of the gateway. Only a request from one of them has its X-Forwarded-For
   * read: the client address is the nearest hop, right to left, that is not a
   * trusted proxy. Empty (the default): the connection's peer is the client,
   * X-Forwarded-For is ignored, and loopback peers are exempt from the
   * gateway-wide rate limits; once set, no address is exempt.
   */
  TRUSTED_PROXIES: z.string().transform(commaSeparated).pipe(z.array(addressOrBlock)).default([]),
  /** Default cap on one tenant's requests in flight per replica; a tenant's `limits.maxInFlight` overrides. 0 is off. */
  TENANT_MAX_IN_FLIGHT: z.coerce.number().int().min(0).default(256),
  /**
   * Load shedding: refuse new requests with 503 while the event loop is
   * delayed by more than this many milliseconds (sampled every second). 0 is off.
   */
  SHED_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(200),
  /**
   * Load shedding, per request: refuse a new request with 503 when the event
   * loop is this many milliseconds behind at the moment it is read (the
   * current turn so far, or the last one). Reacts within a turn where the
   * delay above reacts within a second. 0 is off.
   */
  SHED_EVENT_LOOP_STALL_MS: z.coerce.number().int().min(0).default(0),
  /**
   * Load shedding: refuse new requests while event-loop utilization is above
   * this fraction. 0 (the default) is off: a replica at full throughput is
   * busy, not late; the delay above is what tracks queueing.
   */
  SHED_EVENT_LOOP_UTILIZATION: z.coerce.number().min(0).max(1).default(0),
  /** Open `subscriptions/listen` streams one caller (principal) may hold on one replica. 0 is no cap. */
  LISTEN_MAX_STREAMS_PER_PRINCIPAL: z.coerce.number().int().min(0).default(10),
  /** Open listen streams of one tenant on one replica. 0 is no cap. */
  LISTEN_MAX_STREAMS_PER_TENANT: z.coerce.number().int().min(0).default(1000),
  /** Open listen streams on one replica, all tenants together; always bounded (at least 1). */
  LISTEN_MAX_STREAMS: z.coerce.number().int().min(1).default(10_000),
  /**
   * A burst of changes gives a stream at most one `notifications/resources/list_changed`
   * per this many milliseconds; the last change of a burst is always sent (trailing edge).
   */
  LISTEN_LIST_CHANGED_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  /** An SSE comment on every idle listen stream this often, so proxies and clients keep it open. */
  LISTEN_KEEPALIVE_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
  /**
   * During a SECRETS_KEY rotation, the key before it: source credentials the
   * control plane sealed with it still open. Remove once they are resealed.
   */
  SECRETS_KEY_PREVIOUS: z.string().min(32, 'must be at least 32 characters').optional(),
  /**
   * Bearer token Prometheus sends to scrape `/metrics`. Unset: `/metrics` is
   * served without a token on a loopback HOST and not at all (404) otherwise.
   * Empty counts as unset: what a compose file's `${METRICS_TOKEN:-}` gives
   * when the operator has none.
   */
  METRICS_TOKEN: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .min(32, 'must be at least 32 characters (e.g. `openssl rand -base64 32`)')
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (it travels in an Authorization header)')
      .optional(),
  ),
  /**
   * OTLP/HTTP collector base URL (`http://collector:4318`); spans go to
   * `${OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`. Unset: no tracing.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url({ protocol: /^https?$/ })
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
  /** The `service.name` of exported spans. */
  OTEL_SERVICE_NAME: z.string().min(1).default('mcp-resource-gateway'),
  /**
   * The platform operators' identity provider (the exact `iss` of their
   * tokens). Unset: the admin API has no operators (docs/admin-api.md).
   */
  OPERATOR_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  /** Its JWKS; unset: from the issuer's RFC 8414 / OpenID Connect discovery metadata. */
  OPERATOR_JWKS_URI: z.url({ protocol: /^https?$/ }).optional(),
  /** The `aud` operator tokens must carry (RFC 8707); default `${PUBLIC_URL}/admin/v1`. */
  OPERATOR_AUDIENCE: z.url().optional(),
  /** The claim (a string or an array of strings) holding the operator's roles. */
  OPERATOR_ROLE_CLAIM: z.string().min(1).default('roles'),
  /** The role in that claim that makes the caller a platform operator. */
  OPERATOR_ROLE: z.string().min(1).default('gateway-operator'),
});

export type EnvConfig = z.output<typeof envSchema>;

/** The keys of the environment schema: exactly what .env.example documents. */
export const ENV_KEYS: readonly string[] = Object.keys(envSchema.shape);

/**
 * Reads the environment: the real environment wins, and a `.env` file in
 * `dotEnvDir` (if given and present) fills in keys it lacks. Empty values
 * count as unset. Throws ConfigError listing every problem.
 */
export function readEnv(source: NodeJS.ProcessEnv = process.env, dotEnvDir?: string): EnvConfig {
  const { env, issues } = checkEnv(mergeEnv(source, dotEnvDir));
  if (issues.length > 0) throw new ConfigError('environment', issues);
  return env;
}

/** The environment the gateway sees: `source`, with a `.env` file in `dotEnvDir` filling in what it lacks. */
export function mergeEnv(source: NodeJS.ProcessEnv, dotEnvDir?: string): Record<string, string> {
  const merged: Record<string, string> = dotEnvDir === undefined ? {} : { ...readDotEnv(dotEnvDir) };
  for (const [key, value] of Object.entries(source)) {
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

/** The parsed environment and every problem found in it. */
export interface EnvCheck {
  /**
   * The settings; a key whose value was refused takes its default here, so
   * the bootstrap file can still be checked against the rest (startup stops
   * on `issues` all the same).
   */
  readonly env: EnvConfig;
  readonly issues: ConfigIssue[];
}

/**
 * Checks the whole environment in one pass: every key's value, the rules
 * between keys, and names that look meant for this gateway but are none of
 * its settings (`referenced`: the bootstrap file's `$env` names, which are
 * the operator's own).
 */
export function checkEnv(merged: Readonly<Record<string, string>>, referenced?: ReadonlySet<string>): EnvCheck {
  const relevant = Object.fromEntries(ENV_KEYS.flatMap((key) => (merged[key] ? [[key, merged[key]]] : [])));
  const issues: ConfigIssue[] = [];
  let parsed = envSchema.safeParse(relevant);
  const refused = new Set<string>();
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      issues.push({ path: formatPath(issue.path, 'env'), message: issue.message });
      refused.add(String(issue.path[0]));
    }
    // Keys are independent: without the refused ones the rest parses.
    parsed = envSchema.safeParse(Object.fromEntries(Object.entries(relevant).filter(([key]) => !refused.has(key))));
  }
  const env = parsed.success ? parsed.data : envSchema.parse({});
  if (!isLoopbackHost(env.HOST)) {
    if (env.PUBLIC_URL === undefined && !refused.has('PUBLIC_URL')) {
      // Host and Origin checks, and later the OAuth resource identifier, need the public name.
      issues.push({ path: 'env.PUBLIC_URL', message: `required when HOST (${env.HOST}) is not a loopback address` });
    }
    if (
      env.DATABASE_URL === undefined &&
      !env.SINGLE_REPLICA &&
      !refused.has('DATABASE_URL') &&
      !refused.has('SINGLE_REPLICA')
    ) {
      issues.push({ path: 'env.DATABASE_URL', message: sharedStoreRequired(env.HOST) });
    }
  }
  issues.push(...strayEnvNameIssues(merged, [...ENV_KEYS, ...ADMIN_CLI_ENV_KEYS], referenced));
  return { env, issues };
}

/**
 * A non-loopback bind is a deployment other machines reach, usually as one
 * of several replicas: the embedded store would give each its own tenants.
 */
function sharedStoreRequired(host: string): string {
  return (
    `required when HOST (${host}) is not a loopback address, so that every replica shares one control-plane ` +
    "store; without it the store is embedded PGlite under DATA_DIR, this replica's own (admin writes on it reach " +
    'no other replica and go with DATA_DIR). Set SINGLE_REPLICA=true to run one replica that way on purpose'
  );
}

function readDotEnv(cwd: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(join(cwd, '.env'), 'utf8');
  } catch {
    return {};
  }
  return parseEnv(text) as Record<string, string>;
}

/** Whether HOST names a loopback interface (DNS-rebinding and anonymous-tenant rules depend on it). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || /^127(?:\.\d{1,3}){3}$/.test(bare);
}
