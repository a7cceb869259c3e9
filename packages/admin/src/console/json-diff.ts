/** One leaf that differs between two JSON documents, named by its JSON Pointer (RFC 6901). */
export interface JsonChange {
  readonly pointer: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

const escapeToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

function leaves(value: unknown, pointer: string, into: Map<string, unknown>): Map<string, unknown> {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value)
      ? value.map((item, index) => [String(index), item] as const)
      : Object.entries(value);
    if (entries.length === 0) into.set(pointer, value);
    for (const [key, item] of entries) leaves(item, `${pointer}/${escapeToken(key)}`, into);
    return into;
  }
  into.set(pointer, value);
  return into;
}

/**
 * The leaves that were added, removed or changed from `before` to `after`,
 * in document order: what the audit log's before and after, or a stale form's
 * loaded and current versions, differ by.
 */
export function jsonChanges(before: unknown, after: unknown): JsonChange[] {
  const old = before === undefined || before === null ? new Map<string, unknown>() : leaves(before, '', new Map());
  const now = after === undefined || after === null ? new Map<string, unknown>() : leaves(after, '', new Map());
  const changes: JsonChange[] = [];
  for (const pointer of new Set([...old.keys(), ...now.keys()])) {
    const a = old.get(pointer);
    const b = now.get(pointer);
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    changes.push({
      pointer,
      ...(old.has(pointer) ? { before: a } : {}),
      ...(now.has(pointer) ? { after: b } : {}),
    });
  }
  return changes;
}
