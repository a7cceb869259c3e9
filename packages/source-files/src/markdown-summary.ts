import { parseDocument } from 'yaml';

/** How much of a markdown file the listing reads to find its title and description. */
export const MARKDOWN_HEAD_BYTES = 4096;

export interface MarkdownSummary {
  title?: string;
  description?: string;
  /** Set when a front matter block was found but is not a YAML mapping. */
  invalidFrontMatter?: true;
}

const INVALID = Symbol('invalid front matter');
const OPENING = /^---[ \t]*\r?\n/;
const CLOSING = /^(?:---|\.\.\.)[ \t]*$/m;

/**
 * The title and description of a markdown document from its first
 * `MARKDOWN_HEAD_BYTES`: string `title` and `description` keys of a YAML front
 * matter block (`---` on the first line, closed by `---` or `...`), else a
 * title from the first level-1 ATX heading (`# Title`) outside code fences.
 * A block not closed within the head is ignored, as is everything it holds.
 */
export function summarizeMarkdown(head: string): MarkdownSummary {
  const text = head.startsWith('\uFEFF') ? head.slice(1) : head;
  const summary: MarkdownSummary = {};
  let body = text;
  const opening = OPENING.exec(text);
  if (opening !== null) {
    const afterOpening = text.slice(opening[0].length);
    const closing = CLOSING.exec(afterOpening);
    if (closing === null) return summary;
    body = afterOpening.slice(closing.index + closing[0].length);
    const data = parseFrontMatter(afterOpening.slice(0, closing.index));
    if (data === INVALID) {
      summary.invalidFrontMatter = true;
    } else if (data !== undefined) {
      const { title, description } = data;
      if (typeof title === 'string' && title.trim() !== '') summary.title = title.trim();
      if (typeof description === 'string' && description.trim() !== '') summary.description = description.trim();
    }
  }
  if (summary.title === undefined) {
    const heading = firstHeading(body);
    if (heading !== undefined) summary.title = heading;
  }
  return summary;
}

function firstHeading(body: string): string | undefined {
  let fence: string | undefined;
  for (const line of body.split(/\r?\n/)) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      continue;
    }
    if (fence !== undefined) continue;
    // CommonMark ATX heading: up to 3 spaces, one `#`, a space, an optional closing run of `#`.
    const match = /^ {0,3}#[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (match?.[1] !== undefined && match[1] !== '') return match[1];
  }
  return undefined;
}

/**
 * The front matter as a mapping; `undefined` for an empty block; `INVALID`
 * for YAML errors or a scalar or list. `parseDocument` rather than `parse`,
 * because `parse` writes YAML warnings to the console.
 */
function parseFrontMatter(block: string): Record<string, unknown> | undefined | typeof INVALID {
  const doc = parseDocument(block);
  if (doc.errors.length > 0) return INVALID;
  let data: unknown;
  try {
    // The default alias limit guards against "billion laughs" expansion.
    data = doc.toJS();
  } catch {
    return INVALID;
  }
  if (data === null || data === undefined) return undefined;
  if (typeof data !== 'object' || Array.isArray(data)) return INVALID;
  return data as Record<string, unknown>;
}
