import { GatewayError } from '@mcpgw/core';

/** Where a merged `resources/list` continues: the source (by index and id) and that source's own position. */
export interface ResourceCursorState {
  source: number;
  /** Guards against a configuration change that reordered sources. */
  sourceId: string;
  position?: string | undefined;
}

const malformed = () => new GatewayError('MCPGW_CURSOR_INVALID');

/** Validates the state inside an authenticated cursor (sealed by us, but possibly by an older version). */
export function parseResourceCursor(value: unknown): ResourceCursorState {
  if (typeof value !== 'object' || value === null) throw malformed();
  const { source, sourceId, position } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(source) || (source as number) < 0 || typeof sourceId !== 'string') throw malformed();
  if (position !== undefined && typeof position !== 'string') throw malformed();
  return { source: source as number, sourceId, position };
}

export function parseTemplateCursor(value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw malformed();
  return value as number;
}
