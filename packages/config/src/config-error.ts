/** One problem found in the environment or the bootstrap file, with the path that names it. */
export interface ConfigIssue {
  /** e.g. `tenants[0].sources[1].root` or `env.PORT`. */
  path: string;
  message: string;
}

/**
 * Raised when configuration is invalid. Startup stops on it and nothing is
 * applied: the message lists every issue so one run shows them all.
 */
export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];

  constructor(origin: string, issues: readonly ConfigIssue[]) {
    super(`Invalid configuration (${origin}):\n${issues.map((i) => `  - ${i.path}: ${i.message}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** Formats a property path the way a person reads it: `tenants[0].sources[1].root`. */
export function formatPath(path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>, prefix = ''): string {
  let out = prefix;
  for (const segment of path) {
    const key = typeof segment === 'object' ? segment.key : segment;
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(root)' : out;
}
