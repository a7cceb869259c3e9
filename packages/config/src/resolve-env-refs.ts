import type { ConfigIssue } from './config-error.js';
import { formatPath } from './config-error.js';

/**
 * Replaces every `{ "$env": "NAME" }` in a parsed bootstrap file by the value
 * of that environment variable, so secrets (database passwords, S3 keys) live
 * in the environment or a secret manager, never in the file. A missing
 * variable is an issue naming the path that wanted it.
 */
export function resolveEnvRefs(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  issues: ConfigIssue[],
  path: Array<string | number> = [],
): unknown {
  if (Array.isArray(value)) return value.map((item, index) => resolveEnvRefs(item, env, issues, [...path, index]));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]![0] === '$env') {
    const name = entries[0]![1];
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      issues.push({ path: formatPath(path), message: '"$env" must name an environment variable' });
      return undefined;
    }
    const resolved = env[name];
    if (resolved === undefined || resolved === '') {
      issues.push({ path: formatPath(path), message: `environment variable ${name} is not set` });
      return undefined;
    }
    return resolved;
  }
  return Object.fromEntries(entries.map(([key, item]) => [key, resolveEnvRefs(item, env, issues, [...path, key])]));
}

/** Every variable name a parsed bootstrap file references with `{ "$env": "NAME" }`. */
export function envRefNames(value: unknown, names: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) envRefNames(item, names);
  } else if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 1 && entries[0]![0] === '$env' && typeof entries[0]![1] === 'string') {
      names.add(entries[0]![1]);
    } else {
      for (const [, item] of entries) envRefNames(item, names);
    }
  }
  return names;
}
