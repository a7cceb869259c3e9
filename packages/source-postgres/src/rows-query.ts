import { GatewayError } from '@mcpgw/core';
import { decodeSegment, encodeSegment } from './resource-uri.js';

/**
 * The query of a rows URI (README.md, "Rows"): what an RFC 6570 expansion of
 * `{?limit,after,columns}` yields.
 *
 * - `limit`: 1..rows.maxLimit (default rows.maxLimit).
 * - `after`: the opaque keyset position from a previous page's `next`.
 * - `columns`: comma-separated column names, each percent-encoded like a path
 *   segment (a comma inside a name is `%2C`).
 */
export interface RowsQuery {
  limit: number;
  after: string[] | undefined;
  columns: string[] | undefined;
}

function invalid(message: string): GatewayError {
  return new GatewayError('MCPGW_INPUT_INVALID', message);
}

/** Parses the raw text after `?`; throws MCPGW_INPUT_INVALID with a message that never echoes the input. */
export function parseRowsQuery(raw: string | undefined, maxLimit: number): RowsQuery {
  const result: RowsQuery = { limit: maxLimit, after: undefined, columns: undefined };
  if (raw === undefined) return result;
  const seen = new Set<string>();
  for (const pair of raw.split('&')) {
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    const value = eq === -1 ? undefined : pair.slice(eq + 1);
    if (key !== 'limit' && key !== 'after' && key !== 'columns') {
      throw invalid('Rows URIs take only the query parameters limit, after and columns');
    }
    if (seen.has(key)) throw invalid(`The query parameter ${key} appears more than once`);
    seen.add(key);
    if (value === undefined || value === '') throw invalid(`The query parameter ${key} needs a value`);
    if (key === 'limit') {
      if (!/^[1-9][0-9]{0,6}$/.test(value) || Number(value) > maxLimit) {
        throw invalid(`limit must be an integer from 1 to ${maxLimit}`);
      }
      result.limit = Number(value);
    } else if (key === 'after') {
      result.after = decodeAfter(value);
    } else {
      const names = value.split(',').map(decodeSegment);
      if (names.some((n) => n === undefined))
        throw invalid('columns must be percent-encoded column names separated by commas');
      const list = names as string[];
      if (new Set(list).size !== list.length) throw invalid('columns must not repeat');
      result.columns = list;
    }
  }
  return result;
}

/** The keyset position after a row: its primary key values as text, base64url JSON. */
export function encodeAfter(keys: readonly string[]): string {
  return Buffer.from(JSON.stringify(keys), 'utf8').toString('base64url');
}

function decodeAfter(value: string): string[] {
  const notOurs = invalid('after is not a position this table issued');
  if (!/^[A-Za-z0-9_-]+$/.test(value)) throw notOurs;
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.toString('base64url') !== value) throw notOurs;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw notOurs;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    !parsed.every((v) => typeof v === 'string' && !v.includes('\0'))
  ) {
    throw notOurs;
  }
  return parsed as string[];
}

/** The canonical query text for a rows URI, parameters in template order. */
export function formatRowsQuery(q: { limit: number; after?: readonly string[]; columns?: readonly string[] }): string {
  const parts = [`limit=${q.limit}`];
  if (q.after !== undefined) parts.push(`after=${encodeAfter(q.after)}`);
  if (q.columns !== undefined) parts.push(`columns=${q.columns.map(encodeSegment).join(',')}`);
  return `?${parts.join('&')}`;
}
