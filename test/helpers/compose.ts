/**
 * Compose-file variable interpolation (`${VAR}`, `${VAR:-default}`, `${VAR-default}`,
 * `${VAR:?message}`, `${VAR?message}`, `$$` for a literal `$`), enough to check a compose file
 * against the values `docker compose` would give it. A required variable that is unset throws,
 * as compose refuses to start.
 */
export function interpolateCompose(value: string, env: Readonly<Record<string, string | undefined>>): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])((?:[^}])*))?\}/g,
    (whole, name, colon, op, arg) => {
      if (whole === '$$') return '$';
      const current = env[name as string];
      const unset = current === undefined || (colon === ':' && current === '');
      if (op === '-') return unset ? (arg as string) : (current as string);
      if (op === '?') {
        if (unset) throw new Error(`required variable ${name as string} is not set: ${arg as string}`);
        return current as string;
      }
      return current ?? '';
    },
  );
}

/** Applies {@link interpolateCompose} to every string of a parsed compose document. */
export function interpolateDeep<T>(node: T, env: Readonly<Record<string, string | undefined>>): T {
  if (typeof node === 'string') return interpolateCompose(node, env) as T;
  if (Array.isArray(node)) return node.map((item: unknown) => interpolateDeep(item, env)) as T;
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, interpolateDeep(value, env)])) as T;
  }
  return node;
}
