import type { Source, SourceCaller } from '@mcpgw/core';
import { isGatewayError } from '@mcpgw/core';
import type { CompiledGrants, Grant } from '@mcpgw/policy';
import { listingPrefixesOf } from '@mcpgw/policy';
import type { PreviewWarning } from './preview-schema.js';

/**
 * How much listing the pattern check may do. Each pattern gets at most
 * `callsPerPattern` source calls of `pageSize` descriptors, and the whole
 * preview at most `totalCalls`; a pattern whose check stops at a bound
 * before it found a match is reported as `check-incomplete`, never as
 * matching nothing. The defaults (4 x 100 per pattern, 40 calls in all)
 * keep a preview within the cost of a few dozen `resources/list` pages.
 */
export interface PatternCheckBudget {
  callsPerPattern: number;
  totalCalls: number;
  pageSize: number;
}

export const DEFAULT_PATTERN_BUDGET: PatternCheckBudget = { callsPerPattern: 4, totalCalls: 40, pageSize: 100 };

/**
 * Warnings for the grants' URI patterns that show nothing today: each
 * pattern that matches no resource its source currently lists. Each source is asked only for the pattern's
 * literal prefix (as the catalog narrows a caller's listing), through the
 * tenant's sources as they serve requests, so their shared listing cache
 * answers where it can. Patterns repeated across grants are checked once.
 * A source that answers under each caller's backend identity lists as
 * `options.caller`, the previewed caller: what matches is what their
 * database role may list.
 */
export async function findUnmatchedPatterns(
  grants: readonly Grant[],
  compiled: CompiledGrants,
  sources: readonly Source[],
  options: { signal: AbortSignal; budget?: PatternCheckBudget; caller?: SourceCaller | undefined },
): Promise<PreviewWarning[]> {
  const budget = options.budget ?? DEFAULT_PATTERN_BUDGET;
  const byId = new Map(sources.map((source) => [source.id, source]));
  const warnings: PreviewWarning[] = [];
  const checked = new Map<string, Omit<PreviewWarning, 'grant'> | null>();
  let callsLeft = budget.totalCalls;
  for (const grant of grants) {
    for (const allow of grant.allow) {
      const source = byId.get(allow.source);
      // Configuration refuses a grant naming a source the tenant lacks; nothing to list then.
      if (source === undefined) continue;
      for (const pattern of compiled.patterns.get(allow) ?? []) {
        const key = `${source.id}\n${pattern.source}`;
        if (!checked.has(key)) {
          const calls = Math.min(budget.callsPerPattern, callsLeft);
          const result = await scan(source, pattern, calls, budget.pageSize, options.signal, options.caller);
          callsLeft -= result.calls;
          checked.set(key, result.warning);
        }
        const warning = checked.get(key);
        if (warning != null) warnings.push({ ...warning, grant: grant.name });
      }
    }
  }
  return warnings;
}

interface ScanResult {
  calls: number;
  warning: Omit<PreviewWarning, 'grant'> | null;
}

async function scan(
  source: Source,
  pattern: { readonly source: string; matches(uri: string): boolean },
  maxCalls: number,
  pageSize: number,
  signal: AbortSignal,
  caller: SourceCaller | undefined,
): Promise<ScanResult> {
  const asCaller = source.backendIdentity !== undefined && caller !== undefined ? { caller } : {};
  const about = { source: source.id, pattern: pattern.source };
  const prefixes = listingPrefixesOf([pattern.source]);
  let position: string | undefined;
  let calls = 0;
  while (calls < maxCalls) {
    calls += 1;
    let page;
    try {
      page = await source.listResources(
        {
          ...(position === undefined ? {} : { position }),
          limit: pageSize,
          ...(prefixes === undefined ? {} : { prefixes }),
          ...asCaller,
        },
        signal,
      );
    } catch (error) {
      if (signal.aborted) throw error;
      // The gateway's own errors carry a public message; anything else stays in the logs.
      const why = isGatewayError(error) ? error.message : 'it failed';
      return {
        calls,
        warning: { kind: 'source-unavailable', ...about, message: `Could not list the source to check: ${why}` },
      };
    }
    if (page.items.some((item) => pattern.matches(item.uri))) return { calls, warning: null };
    if (page.nextPosition === undefined) {
      return {
        calls,
        warning: {
          kind: 'pattern-matches-nothing',
          ...about,
          message:
            'caller' in asCaller
              ? `No resource the source currently lists for this caller's database role matches '${pattern.source}'`
              : `No resource the source currently lists matches '${pattern.source}'`,
        },
      };
    }
    position = page.nextPosition;
  }
  return {
    calls,
    warning: {
      kind: 'check-incomplete',
      ...about,
      message:
        calls === 0
          ? "Not checked: the preview's listing budget was spent on earlier patterns"
          : `No match in the first ${calls * pageSize} listed resources; the check stopped there`,
    },
  };
}
