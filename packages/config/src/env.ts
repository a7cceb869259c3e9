import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { egressAllowEntryProblem } from '@mcpgw/core';
import { z } from 'zod';
import { ADMIN_CLI_ENV_KEYS } from './admin-cli-env.js';
import type { ConfigIssue } from './config-error.js';
import { ConfigError, formatPath } from './config-error.js';
import { envSettingDocs } from './env-setting-docs.js';
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
 * The environment the gateway reads, validated once at start. Each setting
 * carries its documentation (`envSettingDocs`): docs/configuration.md's table
 * and .env.example are generated from it (`npm run docs:env`), and a test keeps
 * them equal. Defaults are the embedded development setup: loopback only.
 */
export const envSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1').register(envSettingDocs, {
    group: 'Serving',
    description: 'interface to bind. Anonymous tenants and the development issuer need a loopback address.',
  }),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080).register(envSettingDocs, {
    group: 'Serving',
    description: 'TCP port; `0` picks a free one (then tenants that authenticate need `PUBLIC_URL`).',
  }),
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .refine((value) => {
      // Refinements run after a failed format check too: the format error is the one to report.
      if (!URL.canParse(value)) return true;
      const url = new URL(value);
      return url.search === '' && url.hash === '' && url.pathname === '/';
    }, 'must be an origin such as https://mcp.example.com (no path, query or fragment): tenant endpoints and their RFC 9728 metadata live at fixed paths under it')
    .transform((value) => value.replace(/\/+$/, ''))
    .optional()
    .register(envSettingDocs, {
      group: 'Serving',
      description:
        "the externally visible origin, no path (e.g. `https://mcp.example.com`). Required off loopback. Tenant endpoints are `${PUBLIC_URL}/t/{tenant}/mcp`, which is also each tenant's OAuth resource identifier. Unset on a loopback bind, the gateway answers as `127.0.0.1`, `localhost` and `[::1]` on `PORT` alike (the resource identifier follows the name the client used).",
      unset: '`http://HOST:PORT`',
    }),
  GATEWAY_CONFIG: z.string().min(1).optional().register(envSettingDocs, {
    group: 'Serving',
    description: 'path of the bootstrap file (JSON, or YAML for `.yaml`/`.yml`)',
    unset: 'the demo tenant',
  }),
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info').register(envSettingDocs, {
    group: 'Serving',
    description: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`',
  }),
  ALLOWED_ORIGINS: z.string().transform(commaSeparated).pipe(z.array(origin)).default([]).register(envSettingDocs, {
    group: 'Serving',
    description:
      "comma-separated browser origins allowed to call MCP endpoints, besides `PUBLIC_URL`'s own (and loopback origins on a loopback bind)",
  }),
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
    .default([])
    .register(envSettingDocs, {
      group: 'Serving',
      description:
        'internal destinations tenant admins may still configure: comma-separated CIDRs (`10.0.0.0/8`), addresses (`127.0.0.1`) and host names (`minio.internal`, trusted whatever they resolve to). See [Egress policy](#egress-policy).',
    }),
  DATA_DIR: z.string().min(1).default('.data').register(envSettingDocs, {
    group: 'State and secrets',
    description:
      "folder for local state: the embedded control-plane database (PGlite, in `DATA_DIR/control-plane`) while `DATABASE_URL` is unset; the key sealing source credentials (`control-plane.key`) while `SECRETS_KEY` is unset; the signing keys of the demo login's hosted authorization server and of the local operator issuer; and, while a gateway runs, a record `npm run token` reads to mint for that gateway",
  }),
  REDIS_URL: z
    .string()
    .regex(
      /^rediss?(\+cluster)?:\/\/\S+$/i,
      'must start with redis://, rediss://, redis+cluster:// or rediss+cluster://',
    )
    .optional()
    .register(envSettingDocs, {
      group: 'State and secrets',
      description:
        'Redis shared by all replicas for the result and catalog caches and live change events: `redis://[user:password@]host:6379[/db]`, `rediss://…`, or `redis+cluster://host1:6379,host2:6379` (`rediss+cluster://`) for Redis Cluster. Unset: an in-process LRU (one replica). See [Caching](#caching).',
      unset: 'in-process',
    }),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/i, 'must be a postgres:// or postgresql:// connection string')
    .optional()
    .register(envSettingDocs, {
      group: 'State and secrets',
      description:
        "the control-plane store shared by every replica: `postgres://user:password@host:5432/db`. Unset: embedded PGlite (PostgreSQL in WebAssembly) under `DATA_DIR/control-plane`, this replica's own, kept across restarts. Required when `HOST` is not a loopback address, unless `SINGLE_REPLICA=true`. See [Control plane](#control-plane).",
      unset: 'PGlite under `DATA_DIR`',
    }),
  SINGLE_REPLICA: z
    .enum(['true', 'false'], 'must be true or false')
    .transform((value) => value === 'true')
    .default(false)
    .register(envSettingDocs, {
      group: 'State and secrets',
      description:
        '`true`: this gateway is the only replica, on purpose, on the embedded store (DATABASE_URL unset). That store is its own: admin writes on it reach no other replica and last only as long as `DATA_DIR`. A non-loopback `HOST` without `DATABASE_URL` refuses to start unless this is `true`; on loopback, and with `DATABASE_URL`, it changes nothing.',
    }),
  SECRETS_KEY: z
    .string()
    .min(32, 'must be at least 32 characters (e.g. `openssl rand -base64 32`)')
    .optional()
    .register(envSettingDocs, {
      group: 'State and secrets',
      description:
        '32+ characters from which the gateway derives one key per purpose: cursor encryption, cache keys, admin session cookies, principal fingerprints, and the sealing of source credentials in the control plane. Set the same value on every replica. Unset: a random key per process, so cursors, cache keys and sessions survive neither a restart nor a trip to another replica, and source credentials are sealed with a key kept in `DATA_DIR/control-plane.key`. See [ADR 9](adr/0009-one-key-per-purpose.md)',
      unset: 'random per process',
    }),
  RATE_LIMIT_IP_PER_MINUTE: perMinute.default(0).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      "requests per minute from one client address, checked before the tenant or any token is looked at. Off by default because behind a reverse proxy every request has the proxy's address; set it where clients reach the gateway directly. Loopback peers are exempt. See [docs/operations.md, Limits and overload](operations.md#limits-and-overload).",
  }),
  RATE_LIMIT_TENANT_PER_MINUTE: perMinute.default(60_000).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      "default requests per minute to one tenant, all its callers together; a tenant's `limits.requestsPerMinute` overrides. `0` is off. Not applied to loopback peers.",
  }),
  RATE_LIMIT_PRINCIPAL_PER_MINUTE: perMinute.default(6_000).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      "default requests per minute from one authenticated caller (issuer and subject); a tenant's `limits.perPrincipalPerMinute` overrides. `0` is off. Not applied to loopback peers.",
  }),
  RATE_LIMIT_ADMIN_IP_PER_MINUTE: perMinute.default(600).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      'requests per minute to the admin API (`/admin/v1`) from one client address, checked before any token is verified or any body is read; over it, 429 `too-many-requests` with `Retry-After`. `0` is off. Loopback peers are exempt while `TRUSTED_PROXIES` is empty. See [docs/admin-api.md, Limits](admin-api.md#limits).',
  }),
  RATE_LIMIT_ADMIN_PER_MINUTE: perMinute.default(300).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      'requests per minute to the admin API from one authenticated admin (an operator, or a tenant admin of one tenant), by token or browser session alike. `0` is off. Loopback peers are exempt while `TRUSTED_PROXIES` is empty.',
  }),
  TRUSTED_PROXIES: z
    .string()
    .transform(commaSeparated)
    .pipe(z.array(addressOrBlock))
    .default([])
    .register(envSettingDocs, {
      group: 'Limits and load shedding',
      description:
        'comma-separated IPs and CIDR blocks (`10.0.0.0/8`) of the reverse proxies in front of the gateway. Only from them is `X-Forwarded-For` read: the client is its nearest hop, right to left, not a trusted proxy. Empty: the peer is the client, and loopback peers skip the gateway-wide rate limits. See [operations.md](operations.md#limits-and-overload).',
    }),
  TENANT_MAX_IN_FLIGHT: z.coerce.number().int().min(0).default(256).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      "default cap on one tenant's requests in flight on one replica; more are refused with 503 and `Retry-After: 1` instead of queueing. A tenant's `limits.maxInFlight` overrides; `0` is no cap.",
  }),
  ACCESS_ACTIVITY_RETENTION_HOURS: z.coerce.number().int().min(1).max(720).default(24).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      'how long the admin console\'s access activity keeps which callers (tenant fingerprint, client id, and the subject only when the tenant\'s grants match on subjects) read or listed which resources; in Redis when `REDIS_URL` is set, else in process. See docs/security.md, "Access activity".',
  }),
  ACCESS_ACTIVITY_MAX_ENTRIES: z.coerce.number().int().min(0).max(100_000).default(2000).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      'entries of the access activity kept per tenant at most (one per caller, action and resource); the oldest go first. `0` keeps no record.',
  }),
  SHED_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(200).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      "load shedding: the MCP endpoint answers 503 with `Retry-After: 2` while the event loop's mean delay over the last second is above this. `0` is off.",
  }),
  SHED_EVENT_LOOP_STALL_MS: z.coerce.number().int().min(0).default(0).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      'load shedding per request: the MCP endpoint answers 503 with `Retry-After: 2` when the event loop is this many milliseconds behind as the request is read (the current turn so far, or the previous turn\'s overrun). Reacts within one turn; see docs/operations.md, "Limits and overload", for what it costs.',
  }),
  SHED_EVENT_LOOP_UTILIZATION: z.coerce.number().min(0).max(1).default(0).register(envSettingDocs, {
    group: 'Limits and load shedding',
    description:
      'load shedding: also 503 while event-loop utilization over the last second is above this fraction (0 to 1). Off by default: a replica at full throughput is busy, not late.',
  }),
  LISTEN_MAX_STREAMS_PER_PRINCIPAL: z.coerce.number().int().min(0).default(10).register(envSettingDocs, {
    group: 'Listen streams',
    description:
      'open `subscriptions/listen` streams one caller (issuer and subject, per tenant; the client address on an anonymous tenant) may hold on one replica; one more is refused with 429 and `MCPGW_LISTEN_LIMIT`. `0` is no cap. See docs/protocol.md, "Subscriptions".',
  }),
  LISTEN_MAX_STREAMS_PER_TENANT: z.coerce.number().int().min(0).default(1000).register(envSettingDocs, {
    group: 'Listen streams',
    description:
      'open listen streams of one tenant on one replica, all its callers together; more are refused the same way. `0` is no cap.',
  }),
  LISTEN_MAX_STREAMS: z.coerce.number().int().min(1).default(10_000).register(envSettingDocs, {
    group: 'Listen streams',
    description:
      'open listen streams on one replica, all tenants together (at least 1: always bounded). An idle stream costs a few KiB (docs/performance.md).',
  }),
  LISTEN_LIST_CHANGED_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(1000).register(envSettingDocs, {
    group: 'Listen streams',
    description:
      'coalescing: a stream gets at most one `notifications/resources/list_changed` per this many milliseconds; the last change of a burst is sent once the interval has passed. `0` sends each at once.',
  }),
  LISTEN_KEEPALIVE_MS: z.coerce.number().int().min(100).max(300_000).default(15_000).register(envSettingDocs, {
    group: 'Listen streams',
    description:
      'an SSE comment on every listen stream this often, so proxies and clients do not close a quiet stream (100 to 300000).',
  }),
  SECRETS_KEY_PREVIOUS: z.string().min(32, 'must be at least 32 characters').optional().register(envSettingDocs, {
    group: 'State and secrets',
    description:
      'during a `SECRETS_KEY` rotation, the key before it: credentials the control plane sealed with it, and admin sessions sealed with it, still open (see [Control plane](#control-plane)). Ignored while `SECRETS_KEY` is unset',
  }),
  METRICS_TOKEN: z
    .preprocess(
      (value) => (value === '' ? undefined : value),
      z
        .string()
        .min(32, 'must be at least 32 characters (e.g. `openssl rand -base64 32`)')
        .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (it travels in an Authorization header)')
        .optional(),
    )
    .register(envSettingDocs, {
      group: 'Metrics and traces',
      description:
        'bearer token (32+ printable characters) Prometheus sends to scrape `/metrics`. Unset (or empty): `/metrics` is open on a loopback `HOST` and absent (404) otherwise. See docs/operations.md, "Metrics and traces".',
    }),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .url({ protocol: /^https?$/ })
    .transform((value) => value.replace(/\/+$/, ''))
    .optional()
    .register(envSettingDocs, {
      group: 'Metrics and traces',
      description:
        'OTLP/HTTP collector base URL (`http://otel-collector:4318`); spans go to `${OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`.',
      unset: 'no tracing',
    }),
  OTEL_SERVICE_NAME: z.string().min(1).default('mcp-resource-gateway').register(envSettingDocs, {
    group: 'Metrics and traces',
    description: 'the `service.name` resource attribute of exported spans',
  }),
  OPERATOR_ISSUER: z
    .url({ protocol: /^https?$/ })
    .optional()
    .register(envSettingDocs, {
      group: 'Platform operators',
      description:
        "the platform operators' identity provider (the exact `iss` of their tokens) for the [admin API](admin-api.md). Unset: only tenant admins use it, except on a loopback `HOST` beside a tenant on the demo login, where the local operator issuer's tokens are taken (`npm run token -- --operator`).",
      unset: 'no operators',
    }),
  OPERATOR_JWKS_URI: z
    .url({ protocol: /^https?$/ })
    .optional()
    .register(envSettingDocs, {
      group: 'Platform operators',
      description: "the operators' issuer's JWKS; unset: from its RFC 8414 / OpenID Connect discovery metadata",
      unset: 'from discovery',
    }),
  OPERATOR_AUDIENCE: z.url().optional().register(envSettingDocs, {
    group: 'Platform operators',
    description: 'the `aud` operator tokens must carry (an absolute URI, RFC 8707)',
    unset: '`${PUBLIC_URL}/admin/v1`',
  }),
  OPERATOR_ROLE_CLAIM: z.string().min(1).default('roles').register(envSettingDocs, {
    group: 'Platform operators',
    description:
      "the claim (a string or an array of strings) holding the operator's roles; a dotted path such as `realm_access.roles` reads a nested claim",
  }),
  OPERATOR_ROLE: z.string().min(1).default('gateway-operator').register(envSettingDocs, {
    group: 'Platform operators',
    description: 'the role in that claim that makes the caller a platform operator',
  }),
  OPERATOR_CONSOLE_CLIENT_ID: z.string().min(1).optional().register(envSettingDocs, {
    group: 'Platform operators',
    description:
      "the OAuth client registered at `OPERATOR_ISSUER` for operators' browser sign-in to the [admin console](admin-console.md) (authorization code with PKCE, redirect URI `${PUBLIC_URL}/admin/operator/callback`)",
    unset: 'no browser sign-in for operators of `OPERATOR_ISSUER`',
  }),
  OPERATOR_CONSOLE_CLIENT_SECRET: z.string().min(1).optional().register(envSettingDocs, {
    group: 'Platform operators',
    description: "that client's secret, for a confidential client",
    unset: 'a public client: PKCE alone proves the redeemer (RFC 7636 section 1)',
  }),
  OPERATOR_CONSOLE_SCOPE: z
    .string()
    .regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'must be space-separated RFC 6749 scope tokens')
    .default('openid')
    .register(envSettingDocs, {
      group: 'Platform operators',
      description: "the scopes (space-separated) the operators' browser sign-in requests",
    }),
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
