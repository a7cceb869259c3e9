import type { PreviewWarning } from '../preview-schema.js';
import { ENTITY_FORMS, nameFieldOf } from './entity-forms.js';
import type { FormProblem } from './form-problem.js';

/** One finding of the grant check, where the form shows it: its field and, in "Sees", the line. */
export interface GrantCheckFinding {
  /** The form field (`allow` is "Sees"); null when it names no field of the form. */
  readonly field: string | null;
  /** "Sees" only: the textarea's line (from 1) of the source entry concerned. */
  readonly line?: number;
  /** Where the API's refusal points (a JSON Pointer into the body, or a location in the tenant). */
  readonly where?: string;
  /** The text itself: a save's refusal says exactly this. */
  readonly message: string;
}

/** What `POST /admin/tenants/{tenantId}/grants/check` answers. */
export interface GrantCheckAnswer {
  /** What a save would refuse: empty when it would be accepted. */
  readonly problems: readonly GrantCheckFinding[];
  /** Patterns that would be saved but match nothing their source lists today (the grants page's pattern check). */
  readonly warnings: readonly (GrantCheckFinding & { readonly kind: PreviewWarning['kind'] })[];
}

/**
 * The textarea line (from 1) of each entry of "Sees" as the form turns it into
 * `allow` (ENTITY_FORMS.grants.bodyOf skips blank lines): entry `i` is line
 * `lines[i]`.
 */
function entryLines(allowText: string): { line: number; words: string[] }[] {
  return allowText
    .split('\n')
    .map((text, at) => ({ line: at + 1, words: text.trim().split(/\s+/).filter(Boolean) }))
    .filter((entry) => entry.words.length > 0);
}

/** A refusal of the grant's write, each of its entries at the field (and line) a save would show it. */
export function grantCheckProblems(problem: FormProblem, allowText: string): GrantCheckFinding[] {
  const lines = entryLines(allowText);
  const form = ENTITY_FORMS.grants;
  const entries = problem.errors ?? [];
  if (entries.length === 0) return [{ field: null, message: problem.detail }];
  return entries.map((entry) => {
    const field = nameFieldOf(entry) ?? form.fieldOf(entry) ?? null;
    const where = entry.pointer ?? entry.location ?? entry.parameter ?? entry.header;
    const index = /^\/allow\/(\d+)(\/|$)/.exec(entry.pointer ?? '')?.[1];
    const line = index === undefined ? undefined : lines[Number(index)]?.line;
    return {
      field,
      ...(line === undefined ? {} : { line }),
      ...(where === undefined || where === '' ? {} : { where }),
      message: entry.detail,
    };
  });
}

/** The pattern check's warnings, each at the "Sees" line that has its source and pattern. */
export function grantCheckWarnings(
  warnings: readonly PreviewWarning[],
  allowText: string,
): GrantCheckAnswer['warnings'] {
  const lines = entryLines(allowText);
  return warnings.map((warning) => {
    const at = lines.find(
      ({ words: [source, ...patterns] }) =>
        source === warning.source && (warning.pattern === undefined || patterns.includes(warning.pattern)),
    );
    return {
      field: 'allow',
      ...(at === undefined ? {} : { line: at.line }),
      message: warning.message,
      kind: warning.kind,
    };
  });
}
