/**
 * `--name NAME=value,...` from the command line as an object (empty when the
 * flag is absent), for the environment a bench gives one of its processes.
 */
export function envFlag(name: string): Record<string, string> {
  const at = process.argv.indexOf(`--${name}`);
  if (at === -1) return {};
  return Object.fromEntries(
    (process.argv[at + 1] ?? '')
      .split(',')
      .filter((pair) => pair !== '')
      .map((pair) => {
        const equals = pair.indexOf('=');
        if (equals < 1) throw new Error(`--${name}: "${pair}" is not NAME=value`);
        return [pair.slice(0, equals), pair.slice(equals + 1)];
      }),
  );
}
