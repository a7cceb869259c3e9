/** Binary units, largest first (IEC 80000-13 names: a KiB is 1024 bytes). */
const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['GiB', 1024 ** 3],
  ['MiB', 1024 ** 2],
  ['KiB', 1024],
];

/**
 * A size limit as messages and logs print it: `10 MiB (10485760 bytes)`,
 * `1.5 KiB (1536 bytes)` or `1500 bytes`. The unit is for a person, the exact
 * count for an operator comparing it with a configured value.
 */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of UNITS) {
    if (bytes >= size) {
      const value = bytes / size;
      const shown = Number.isInteger(value) ? String(value) : value.toFixed(1);
      return `${shown} ${unit} (${bytes} bytes)`;
    }
  }
  return `${bytes} bytes`;
}
