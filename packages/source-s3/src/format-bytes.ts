/** "10 MiB (10485760 bytes)": a limit a person can read and an operator can grep. */
export function formatBytes(bytes: number): string {
  const units: Array<[string, number]> = [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ];
  for (const [unit, size] of units) {
    if (bytes >= size) {
      const value = bytes / size;
      const shown = Number.isInteger(value) ? String(value) : value.toFixed(1);
      return `${shown} ${unit} (${bytes} bytes)`;
    }
  }
  return `${bytes} bytes`;
}
