import type { Logger } from '@mcpgw/core';

/** One captured log call: level, merged child bindings and fields, message. */
export interface LogRecord {
  readonly level: string;
  readonly fields: Record<string, unknown>;
  readonly msg?: string | undefined;
}

/** A Logger that keeps every record, so a test can read what would be logged. */
export function capturingLogger(
  records: LogRecord[] = [],
  bindings: Record<string, unknown> = {},
): Logger & {
  records: LogRecord[];
} {
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      records.push({ level, fields: { ...bindings, ...obj }, msg });
    };
  return {
    records,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => capturingLogger(records, { ...bindings, ...more }),
  };
}
