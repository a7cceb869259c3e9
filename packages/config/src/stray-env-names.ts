import type { ConfigIssue } from './config-error.js';

/**
 * First words of our keys that other software uses for its own variables too
 * (`REDIS_HOST`, `DATABASE_HOST`, `LOG_FORMAT`, `ALLOWED_HOSTS`, `ADMIN_EMAIL`,
 * OpenTelemetry's `OTEL_*`): a name under them is judged by its distance to
 * our keys only, never by its prefix.
 */
const SHARED_FIRST_WORDS: ReadonlySet<string> = new Set([
  'ADMIN',
  'ALLOWED',
  'DATA',
  'DATABASE',
  'LOG',
  'OTEL',
  'PUBLIC',
  'REDIS',
]);

/** Names the shell, Node, npm and container platforms set: never ours to judge. */
const PLATFORM_NAMES: ReadonlySet<string> = new Set([
  '_',
  'CI',
  'HOME',
  'HOSTNAME',
  'INIT_CWD',
  'LANG',
  'NODE',
  'OLDPWD',
  'PATH',
  'PWD',
  'SHELL',
  'SHLVL',
  'TERM',
  'TZ',
  'USER',
]);
const PLATFORM_PREFIXES = ['OTEL_', 'NODE_', 'NPM_', 'KUBERNETES_', 'LC_'] as const;

/**
 * The variables kubelet derives from every Service of the namespace (and
 * Docker's legacy links): `{SVC}_SERVICE_HOST`, `{SVC}_SERVICE_PORT[_{NAME}]`,
 * `{SVC}_PORT=tcp://…`, `{SVC}_PORT_{n}_{TCP|UDP|SCTP}[_PROTO|_PORT|_ADDR]`.
 * A Service named `gateway` gives `GATEWAY_PORT` and `GATEWAY_SERVICE_HOST`.
 */
function isServiceLinkVariable(name: string, value: string): boolean {
  if (/_SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?$/.test(name)) return true;
  if (/_PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$/.test(name)) return true;
  return /_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value);
}

function isPlatformName(name: string, value: string): boolean {
  return (
    PLATFORM_NAMES.has(name) ||
    PLATFORM_PREFIXES.some((prefix) => name.startsWith(prefix)) ||
    isServiceLinkVariable(name, value)
  );
}

/**
 * Optimal string alignment distance (Damerau-Levenshtein restricted to
 * adjacent transpositions that are not edited again): insertions, deletions,
 * substitutions and swaps of two neighbours each cost 1, so `OPERATOR_ISUER`
 * is 1 from `OPERATOR_ISSUER` and `PROT` is 1 from `PORT`.
 */
export function osaDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array<number>(rows * cols).fill(0);
  const at = (i: number, j: number) => d[i * cols + j] as number;
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      d[i * cols + j] = best;
    }
  }
  return at(a.length, b.length);
}

/** A typo this far from a key counts as meaning it: 2 for keys of 8+ characters, 1 for shorter (HOME is not HOST). */
function reach(key: string): number {
  return key.length >= 8 ? 2 : 1;
}

/** The prefixes only this gateway uses, derived from its keys: `OPERATOR_`, `LISTEN_`, `SHED_`, … */
function ownPrefixes(keys: readonly string[]): string[] {
  const words = keys.flatMap((key) => (key.includes('_') ? [key.slice(0, key.indexOf('_'))] : []));
  return [...new Set(words)].filter((word) => !SHARED_FIRST_WORDS.has(word)).map((word) => `${word}_`);
}

/**
 * Variables of the environment that look meant for this gateway but are none
 * of its settings: within a small edit distance of a key, or under a prefix
 * only the gateway uses. A misspelt setting would otherwise be ignored and its
 * default silently used (an `OPERATOR_ISUER` leaves the admin API without
 * operators). Platform and library variables are left alone, and so are the
 * names in `referenced` (the bootstrap file's `$env` references).
 */
export function strayEnvNameIssues(
  environment: Readonly<Record<string, string>>,
  keys: readonly string[],
  referenced: ReadonlySet<string> = new Set(),
): ConfigIssue[] {
  const known = new Set(keys);
  const prefixes = ownPrefixes(keys);
  const issues: ConfigIssue[] = [];
  for (const [name, value] of Object.entries(environment)) {
    // Empty counts as unset for settings too: a misspelt empty one changes nothing.
    if (value === '' || known.has(name) || referenced.has(name)) continue;
    // Compared as written in upper case: `port` or `Log_Level` are misspellings too.
    const upper = name.toUpperCase();
    if (isPlatformName(upper, value)) continue;
    const nearest = keys
      .map((key) => ({ key, distance: osaDistance(upper, key) }))
      .filter(({ key, distance }) => distance <= reach(key))
      .sort((x, y) => x.distance - y.distance || x.key.localeCompare(y.key))[0];
    if (nearest !== undefined) {
      issues.push({
        path: `env.${name}`,
        message: `${name} is not a setting of this gateway; did you mean ${nearest.key}?`,
      });
      continue;
    }
    const prefix = prefixes.find((p) => upper.startsWith(p));
    if (prefix !== undefined) {
      const siblings = keys.filter((key) => key.startsWith(prefix));
      issues.push({
        path: `env.${name}`,
        message: `${name} is not a setting of this gateway; its settings starting ${prefix} are ${siblings.join(', ')}`,
      });
    }
  }
  return issues;
}
