/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed `/metrics` body: `# TYPE` lines and samples (enough for tests; no escapes beyond `\"`). */
export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** Samples of `name` whose labels include every given pair. */
  find(name: string, labels?: Record<string, string>): Sample[];
  /** The sum of those samples' values (0 when none). */
  value(name: string, labels?: Record<string, string>): number;
}

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) types.set(type[1] as string, type[2] as string);
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key as string] = (value as string).replace(/\\"/g, '"');
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  const find = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return { types, samples, find, value: (name, labels) => find(name, labels).reduce((sum, s) => sum + s.value, 0) };
}
